package interop

import (
	"encoding/xml"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dwellhttp/dwell/core/coretest"
)

// h2spec (github.com/summerwind/h2spec), the conformance suite for HTTP/2 servers: its
// generic, HTTP/2 (RFC 7540 sections 3 to 8) and HPACK (RFC 7541) cases, strict ones included
// (-S), against dwell over h2c and over TLS. It is a Go program, not a package of the test
// module (it has no go.mod of its own, and its dependencies would become the module's):
//
//	go install github.com/summerwind/h2spec/cmd/h2spec@latest
//
// puts it in $(go env GOBIN) or $(go env GOPATH)/bin, where the test finds it when it is not
// on PATH; without it the test skips.

// h2specPath returns h2spec's path, skipping the test when it is not installed.
func h2specPath(t *testing.T) string {
	t.Helper()
	if path, err := exec.LookPath("h2spec"); err == nil {
		return path
	}
	var dirs []string
	if out, err := exec.Command("go", "env", "GOBIN", "GOPATH").Output(); err == nil {
		lines := strings.Split(string(out), "\n") // GOBIN's line is empty when it is not set
		if len(lines) >= 2 {
			if gobin := strings.TrimSpace(lines[0]); gobin != "" {
				dirs = append(dirs, gobin)
			}
			for _, dir := range filepath.SplitList(strings.TrimSpace(lines[1])) {
				dirs = append(dirs, filepath.Join(dir, "bin"))
			}
		}
	}
	for _, dir := range dirs {
		path := filepath.Join(dir, "h2spec")
		if fi, err := os.Stat(path); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return path
		}
	}
	t.Skipf("h2spec not found on PATH nor in %q: go install github.com/summerwind/h2spec/cmd/h2spec@latest", dirs)
	return ""
}

// h2specReport is h2spec's JUnit report (-j): a suite for each section, a case for each test.
type h2specReport struct {
	Suites []struct {
		Name  string `xml:"name,attr"`
		Cases []struct {
			Package string  `xml:"package,attr"` // the section, "http2/3.5"
			Desc    string  `xml:"classname,attr"`
			Failure *string `xml:"failure"`
			Error   *string `xml:"error"` // h2spec reports most of its failures as errors
			Skipped *string `xml:"skipped"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}

// h2specSummary is h2spec's last line: "145 tests, 144 passed, 0 skipped, 1 failed".
var h2specSummary = regexp.MustCompile(`(?m)^(\d+) tests, (\d+) passed, (\d+) skipped, (\d+) failed$`)

// TestH2spec: every h2spec case passes, over TLS and over h2c. (3.5 #2 sends "INVALID CONNECTION
// PREFACE" and wants the connection closed without an answer, which the plaintext port, serving
// HTTP/1.1 and h2c on one port, does for a line that names no HTTP/1.x version: see
// conn.reject.)
func TestH2spec(t *testing.T) {
	h2spec := h2specPath(t)
	s := serveH2(t)
	forEachPort(t, func(t *testing.T, secure bool) {
		junit := filepath.Join(t.TempDir(), "h2spec.xml")
		// -o is how long a case waits for the server's next frame before it fails: the tests
		// assert no time, so it is Patience, which a loaded machine does not reach. The cases
		// that pass do not wait for it.
		// -P: a path whose response has a body. Some cases need one: 5.1.2 keeps a hundred
		// streams open by granting no window for their DATA, and two of section 2 wait for
		// DATA; an empty response ends its stream with its HEADERS.
		args := []string{"-h", "127.0.0.1", "-p", s.port(secure), "-P", "/hello", "-S", "-j", junit,
			"-o", strconv.Itoa(int(coretest.Patience / time.Second))}
		if secure {
			args = append(args, "-t", "-k") // -k: h2spec takes no CA; the certificate is the Go clients' to check
		}
		out, errOut, err := runToolOut(t, nil, h2spec, args...)
		out += errOut
		// h2spec exits 1 when a case fails: the report says which.
		raw, rerr := os.ReadFile(junit)
		var report h2specReport
		if rerr == nil {
			rerr = xml.Unmarshal(raw, &report)
		}
		sum := h2specSummary.FindStringSubmatch(out)
		if rerr != nil || sum == nil {
			t.Fatalf("h2spec %q: %v; report: %v\n%s", args, err, rerr, out)
		}

		cases, skipped := 0, 0
		for _, suite := range report.Suites {
			for _, c := range suite.Cases {
				cases++
				switch {
				case c.Skipped != nil:
					skipped++
				case c.Failure == nil && c.Error == nil:
				default:
					msg := c.Failure
					if msg == nil {
						msg = c.Error
					}
					t.Errorf("%s (%s) %q failed:\n%s", suite.Name, c.Package, c.Desc, strings.TrimSpace(*msg))
				}
			}
		}
		// The report and the summary agree, and the suite ran: a run cut short, or a report
		// this parser misreads, is not a pass.
		if n, _ := strconv.Atoi(sum[1]); n != cases || cases < 140 {
			t.Errorf("%d cases in the report, %s in the summary %q, want the same and at least 140", cases, sum[1], sum[0])
		}
		if failed, _ := strconv.Atoi(sum[4]); failed != 0 && !t.Failed() {
			t.Errorf("summary %q: the report finds no failure", sum[0])
		}
		t.Logf("h2spec: %s (%d skipped)", sum[0], skipped)
		if t.Failed() {
			t.Logf("h2spec's output:\n%s", out)
		}
	})
}
