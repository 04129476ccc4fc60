package interop

import (
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// nghttp2's client, nghttp, and its load generator, h2load (apt-get install nghttp2-client),
// against dwell's HTTP/2: h2c with prior knowledge (their default for http:// URLs) and h2 by
// ALPN over TLS. They skip when the tools are not installed, as the tests of curl do.

// nghttp2Tool is tool for nghttp and h2load, whose skip names their Debian package.
func nghttp2Tool(t *testing.T, name string) string {
	t.Helper()
	if _, err := exec.LookPath(name); err != nil {
		t.Skipf("%s not found (apt-get install nghttp2-client): %v", name, err)
	}
	return tool(t, name)
}

// nghttpEnv has nghttp (OpenSSL's default verify paths) trust the test's CA, so that the
// server's certificate is verified: nghttp checks it, and only warns when it fails.
func nghttpEnv(s *h2Server) []string { return []string{"SSL_CERT_FILE=" + s.pki.caFile} }

var (
	// nghttpStatus is a response's :status as nghttp -v prints it.
	nghttpStatus = regexp.MustCompile(`(?m)recv \(stream_id=(\d+)\) :status: (\d+)$`)
	// nghttpRecv is a frame received, as nghttp -v prints it.
	nghttpRecv = regexp.MustCompile(`(?m)recv ([A-Z_]+) frame <length=\d+, flags=0x([0-9a-f]{2}), stream_id=(\d+)>`)
)

// TestNghttp: nghttp multiplexes 15 requests (three URLs, -m 5 times each: the known body, 300
// kB streamed, the connection's TLS state) as streams of one connection; every stream is
// answered 200 and ended by the server (END_STREAM), with no RST_STREAM or GOAWAY, and nghttp
// exits cleanly. A POST of 3 MiB (-d) comes back whole.
func TestNghttp(t *testing.T) {
	s := serveH2(t)
	nghttp := nghttp2Tool(t, "nghttp")
	forEachPort(t, func(t *testing.T, secure bool) {
		const times = 5
		url := s.url
		if secure {
			// nghttp checks the certificate for the URL's host by its DNS names alone (it
			// warns of a mismatch for 127.0.0.1, which the certificate names among its IP
			// addresses): localhost it is, which also has it send SNI. The server listens on
			// 127.0.0.1 only; an address of localhost's that is not refuses the connection,
			// and nghttp tries the next.
			url = func(_ bool, path string) string { return curlURL(s, true, path) }
		}
		urls := []string{url(secure, "/hello"), url(secure, "/stream?n=300000"), url(secure, "/info")}
		out, errOut, err := runToolOut(t, nghttpEnv(s), nghttp, append([]string{"-nv", "-m", strconv.Itoa(times)}, urls...)...)
		out += errOut
		if err != nil {
			t.Fatalf("nghttp -nv: %v\n%s", err, out)
		}
		statuses := map[string]string{}
		for _, m := range nghttpStatus.FindAllStringSubmatch(out, -1) {
			statuses[m[1]] = m[2]
		}
		ended := map[string]bool{}
		for _, m := range nghttpRecv.FindAllStringSubmatch(out, -1) {
			flags, _ := strconv.ParseUint(m[2], 16, 8)
			switch {
			case m[1] == "RST_STREAM" || m[1] == "GOAWAY":
				t.Errorf("nghttp received %s on stream %s", m[1], m[3])
			case (m[1] == "DATA" || m[1] == "HEADERS") && flags&1 != 0: // END_STREAM
				ended[m[3]] = true
			}
		}
		n200 := 0
		for id, st := range statuses {
			if st == "200" {
				n200++
			}
			if !ended[id] {
				t.Errorf("stream %s (%s) not ended by the server", id, st)
			}
		}
		if want := len(urls) * times; n200 != want || len(statuses) != want || len(ended) != want {
			t.Errorf("%d streams answered 200 of %d answered, %d ended, want %d", n200, len(statuses), len(ended), want)
		}
		if secure && (!strings.Contains(out, "The negotiated protocol: h2") || strings.Contains(out, "verification failed")) {
			t.Errorf("not h2, or the server's certificate not verified")
		}
		if t.Failed() {
			t.Logf("nghttp -nv:\n%s", out)
		}

		body := randomBody(3 << 20)
		echo, errOut, err := runToolOut(t, nghttpEnv(s), nghttp, "-d", writeTemp(t, "post", body), url(secure, "/echo"))
		if err != nil {
			t.Fatalf("nghttp -d: %v\n%s", err, errOut)
		}
		sameBytes(t, "the echo", []byte(echo), body)
	})
}

// h2loadResult is what h2load's summary says of a run.
type h2loadResult struct {
	protocol                                               string // "Application protocol:": h2c or h2
	total, started, done, succeeded, failed, errored, tout int    // "requests:"
	status2xx                                              int    // "status codes:"
	dataBytes                                              int    // "traffic:": the bodies' bytes
}

var (
	h2loadRequests = regexp.MustCompile(`(?m)^requests: (\d+) total, (\d+) started, (\d+) done, (\d+) succeeded, (\d+) failed, (\d+) errored, (\d+) timeout$`)
	h2loadStatus   = regexp.MustCompile(`(?m)^status codes: (\d+) 2xx,`)
	h2loadTraffic  = regexp.MustCompile(`(?m)^traffic: .*, [^,]* \((\d+)\) data$`)
	h2loadProtocol = regexp.MustCompile(`(?m)^Application protocol: (\S+)$`)
)

// h2load runs h2load with args and parses its summary, failing the test unless it has one.
func h2load(t *testing.T, args ...string) h2loadResult {
	t.Helper()
	out, errOut, err := runToolOut(t, nil, nghttp2Tool(t, "h2load"), args...)
	out += errOut
	req, st, tr, pr := h2loadRequests.FindStringSubmatch(out), h2loadStatus.FindStringSubmatch(out),
		h2loadTraffic.FindStringSubmatch(out), h2loadProtocol.FindStringSubmatch(out)
	if err != nil || req == nil || st == nil || tr == nil || pr == nil {
		t.Fatalf("h2load %q: %v\n%s", args, err, out)
	}
	n := func(s string) int { v, _ := strconv.Atoi(s); return v }
	return h2loadResult{protocol: pr[1], total: n(req[1]), started: n(req[2]), done: n(req[3]), succeeded: n(req[4]),
		failed: n(req[5]), errored: n(req[6]), tout: n(req[7]), status2xx: n(st[1]), dataBytes: n(tr[1])}
}

// TestH2load: short, bounded h2load runs, 4 connections with 10 streams each at a time: 2000
// GETs of the known body, and 200 POSTs of 100 KiB to the echo, each of them past a stream's
// window, ten of them at a time past the connection's. Every request succeeds with a 2xx and
// every body byte comes back; how fast is not this test's business.
func TestH2load(t *testing.T) {
	s := serveH2(t)
	forEachPort(t, func(t *testing.T, secure bool) {
		proto := "h2c"
		if secure {
			proto = "h2"
		}
		post := writeTemp(t, "post", randomBody(100<<10))
		for _, run := range []struct {
			n        int
			args     []string
			path     string
			bodySize int
		}{
			{2000, nil, "/hello", len(helloBody("HTTP/2.0"))},
			{200, []string{"-d", post}, "/echo", 100 << 10},
		} {
			t.Run(strings.TrimPrefix(run.path, "/"), func(t *testing.T) {
				args := append([]string{"-n", strconv.Itoa(run.n), "-c", "4", "-m", "10"}, run.args...)
				r := h2load(t, append(args, s.url(secure, run.path))...)
				want := h2loadResult{protocol: proto, total: run.n, started: run.n, done: run.n, succeeded: run.n,
					status2xx: run.n, dataBytes: run.n * run.bodySize}
				if r != want {
					t.Errorf("h2load %s:\n got %+v\nwant %+v", run.path, r, want)
				}
			})
		}
	})
}

// TestNghttpLongDownload: a 64 MiB response to nghttp with 64 KiB windows (-w 16 -W 16: the
// stream's and the connection's), which it gives back as it reads — thousands of
// WINDOW_UPDATEs on one stream, every one answering the server's own DATA — arrives whole and
// in order, with no GOAWAY or RST_STREAM.
func TestNghttpLongDownload(t *testing.T) {
	if testing.Short() {
		t.Skip("64 MiB over each port")
	}
	s := serveH2(t)
	nghttp := nghttp2Tool(t, "nghttp")
	forEachPort(t, func(t *testing.T, secure bool) {
		const size = 64 << 20
		path := "/stream?n=" + strconv.Itoa(size)
		url := s.url(secure, path)
		if secure {
			url = curlURL(s, true, path)
		}
		out, errOut, err := runToolOut(t, nghttpEnv(s), nghttp, "-w", "16", "-W", "16", url)
		if err != nil || strings.Contains(errOut, "GOAWAY") || strings.Contains(errOut, "RST_STREAM") {
			t.Fatalf("nghttp -w 16 -W 16: %v, %d of %d bytes\n%s", err, len(out), size, errOut)
		}
		sameBytes(t, "the response", []byte(out), streamBytes(0, size))
	})
}
