package body_test

import (
	"bytes"
	"crypto/sha256"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dwellhttp/dwell/body"
	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/core/coretest"
)

// The served tree: modification times have a fraction of a second, which HTTP dates drop.
var (
	fileTime  = time.Date(2024, 1, 2, 3, 4, 5, 500_000_000, time.UTC)
	lastMod   = "Tue, 02 Jan 2024 03:04:05 GMT"
	helloText = "Hello, ranges and validators!\n" // 30 bytes
	files     = map[string]string{
		"hello.txt":       helloText,
		"page.html":       "<p>page</p>",
		"style.css":       "p { color: red }",
		"noext":           "<!DOCTYPE html><title>t</title>",
		"blob":            "\x00\x01\x02binary",
		"empty.txt":       "",
		"sub/index.html":  "<p>index</p>",
		"nodir/other.txt": "x",
		"a b.txt":         "spaced",
		"%2e%2e":          "a file named %2e%2e",
	}
	bigFile = payload(3<<20+17, 2)
)

// serveTree writes the tree (and big.bin) into a new directory, with a secret file beside it
// that must never be served.
func serveTree(t *testing.T) (root, secret string) {
	parent := t.TempDir()
	root = filepath.Join(parent, "root")
	for name, content := range files {
		p := filepath.Join(root, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		os.Chtimes(p, fileTime, fileTime)
	}
	if err := os.WriteFile(filepath.Join(root, "big.bin"), bigFile, 0o644); err != nil {
		t.Fatal(err)
	}
	secret = filepath.Join(parent, "secret.txt")
	os.WriteFile(secret, []byte("SECRET"), 0o644)
	os.Symlink(secret, filepath.Join(root, "escape"))
	os.Symlink("../secret.txt", filepath.Join(root, "escape-relative"))
	os.Symlink("hello.txt", filepath.Join(root, "inside-link"))
	return root, secret
}

// fileServer serves root with ServeRoot; under /content/ it serves the same files through
// ServeContent from memory (no sendfile), and /file/NAME with ServeFile.
func fileServer(t *testing.T, root string) string {
	_, addr := coretest.Serve(t, func(c *core.Ctx) {
		p := c.Path()
		switch {
		case strings.HasPrefix(p, "/content/"):
			name := strings.TrimPrefix(p, "/content/")
			b, err := os.ReadFile(filepath.Join(root, name))
			if err != nil {
				c.SetStatus(404)
				return
			}
			body.ServeContent(c, name, fileTime, strings.NewReader(string(b)))
		case strings.HasPrefix(p, "/file/"):
			body.ServeFile(c, filepath.Join(root, strings.TrimPrefix(p, "/file/")))
		default:
			body.ServeRoot(c, root, p)
		}
	}, core.Options{WriteHighWater: 64 << 10})
	return addr
}

// get sends one request for the raw target on its own connection; headers are "Name: value"
// lines.
func get(t *testing.T, addr, method, target string, headers ...string) (*http.Response, string) {
	t.Helper()
	c := dial(t, addr)
	req := method + " " + target + " HTTP/1.1\r\nHost: h\r\n"
	for _, h := range headers {
		req += h + "\r\n"
	}
	c.Send(req + "\r\n")
	return c.Response(method)
}

func TestServeTypes(t *testing.T) {
	root, _ := serveTree(t)
	addr := fileServer(t, root)
	types := map[string]string{
		"hello.txt": "text/plain; charset=utf-8",
		"page.html": "text/html; charset=utf-8",
		"style.css": "text/css; charset=utf-8",
		"noext":     "text/html; charset=utf-8", // sniffed
		"blob":      "application/octet-stream", // sniffed
		"empty.txt": "text/plain; charset=utf-8",
	}
	for _, prefix := range []string{"/", "/content/", "/file/"} {
		for name, ctype := range types {
			resp, got := get(t, addr, "GET", prefix+name)
			content := files[name]
			if resp.StatusCode != 200 || got != content || resp.Header.Get("Content-Type") != ctype {
				t.Errorf("%s%s: %d %q type %q, want %q %q", prefix, name, resp.StatusCode, got,
					resp.Header.Get("Content-Type"), content, ctype)
				continue
			}
			h := resp.Header
			if resp.ContentLength != int64(len(content)) || h.Get("Accept-Ranges") != "bytes" ||
				h.Get("Last-Modified") != lastMod || !strings.HasPrefix(h.Get("ETag"), `"`) {
				t.Errorf("%s%s: headers %v", prefix, name, h)
			}
		}
	}
	// A type set by the handler wins; the percent-encoded name is decoded once.
	if resp, got := get(t, addr, "GET", "/a%20b.txt"); got != "spaced" || resp.StatusCode != 200 {
		t.Errorf("encoded name: %d %q", resp.StatusCode, got)
	}
}

func TestServeRanges(t *testing.T) {
	root, _ := serveTree(t)
	addr := fileServer(t, root)
	size := strconv.Itoa(len(helloText))
	etag := func() string {
		resp, _ := get(t, addr, "HEAD", "/hello.txt")
		return resp.Header.Get("ETag")
	}()
	tests := []struct {
		headers []string
		status  int
		body    string
		crange  string
	}{
		{[]string{"Range: bytes=0-4"}, 206, "Hello", "bytes 0-4/" + size},
		{[]string{"Range: bytes=7-"}, 206, helloText[7:], "bytes 7-29/" + size},
		{[]string{"Range: bytes=-11"}, 206, "validators!\n"[1:], "bytes 19-29/" + size},
		{[]string{"Range: bytes=25-1000"}, 206, helloText[25:], "bytes 25-29/" + size},
		{[]string{"Range: bytes=30-"}, 416, "", "bytes */" + size},
		{[]string{"Range: bytes=-0"}, 416, "", "bytes */" + size},
		{[]string{"Range: bytes=4-2"}, 416, "", "bytes */" + size},
		{[]string{"Range: bytes=0-1,5-6"}, 200, helloText, ""}, // several ranges: whole
		{[]string{"Range: lines=1-2"}, 200, helloText, ""},     // unknown unit: ignored
		{[]string{"Range: bytes=0-4", "If-Range: " + etag}, 206, "Hello", "bytes 0-4/" + size},
		{[]string{"Range: bytes=0-4", `If-Range: "stale"`}, 200, helloText, ""},
		{[]string{"Range: bytes=0-4", "If-Range: W/" + etag}, 200, helloText, ""}, // weak never matches
		{[]string{"Range: bytes=0-4", "If-Range: " + lastMod}, 206, "Hello", "bytes 0-4/" + size},
		{[]string{"Range: bytes=0-4", "If-Range: Tue, 02 Jan 2024 03:04:06 GMT"}, 200, helloText, ""},
	}
	for _, prefix := range []string{"/", "/content/"} {
		for _, tc := range tests {
			resp, got := get(t, addr, "GET", prefix+"hello.txt", tc.headers...)
			if resp.StatusCode != tc.status || resp.Header.Get("Content-Range") != tc.crange ||
				tc.status != 416 && (got != tc.body || resp.ContentLength != int64(len(tc.body))) {
				t.Errorf("%s %v: %d %q %q, want %d %q %q", prefix, tc.headers, resp.StatusCode, got,
					resp.Header.Get("Content-Range"), tc.status, tc.body, tc.crange)
			}
		}
	}
	// A range of a large file, through sendfile, and the whole file.
	resp, got := get(t, addr, "GET", "/big.bin", "Range: bytes=1048576-2097151")
	if resp.StatusCode != 206 || got != string(bigFile[1<<20:2<<20]) {
		t.Fatalf("big range: %d, %d bytes", resp.StatusCode, len(got))
	}
	resp, got = get(t, addr, "GET", "/big.bin")
	if sha256.Sum256([]byte(got)) != sha256.Sum256(bigFile) || resp.ContentLength != int64(len(bigFile)) {
		t.Fatalf("big file: %d bytes", len(got))
	}
	// An empty file has no range to give: the whole (empty) content.
	if resp, _ := get(t, addr, "GET", "/empty.txt", "Range: bytes=0-"); resp.StatusCode != 200 {
		t.Fatalf("empty file with a range: %d", resp.StatusCode)
	}
}

func TestServeConditional(t *testing.T) {
	root, _ := serveTree(t)
	addr := fileServer(t, root)
	for _, prefix := range []string{"/", "/content/"} {
		resp, _ := get(t, addr, "GET", prefix+"hello.txt")
		etag := resp.Header.Get("ETag")
		tests := []struct {
			method  string
			headers []string
			status  int
		}{
			{"GET", []string{"If-None-Match: " + etag}, 304},
			{"GET", []string{"If-None-Match: W/" + etag}, 304}, // weak comparison
			{"GET", []string{`If-None-Match: "x", ` + etag}, 304},
			{"GET", []string{"If-None-Match: *"}, 304},
			{"HEAD", []string{"If-None-Match: " + etag}, 304},
			{"GET", []string{`If-None-Match: "x"`}, 200},
			{"POST", []string{"If-None-Match: " + etag}, 412},
			{"GET", []string{"If-Modified-Since: " + lastMod}, 304},
			{"GET", []string{"If-Modified-Since: Tue, 02 Jan 2024 03:04:04 GMT"}, 200},
			{"GET", []string{"If-Modified-Since: Wed, 03 Jan 2024 00:00:00 GMT"}, 304},
			{"GET", []string{"If-Modified-Since: Tuesday, 02-Jan-24 03:04:05 GMT"}, 304},
			{"GET", []string{"If-Modified-Since: not a date"}, 200},
			{"POST", []string{"If-Modified-Since: " + lastMod}, 200}, // only GET and HEAD
			// If-None-Match decides, If-Modified-Since is then ignored (RFC 9110 §13.1.3).
			{"GET", []string{`If-None-Match: "x"`, "If-Modified-Since: " + lastMod}, 200},
			{"GET", []string{"If-Match: " + etag}, 200},
			{"GET", []string{`If-Match: "x"`}, 412},
			{"GET", []string{"If-Match: W/" + etag}, 412}, // strong comparison
			{"GET", []string{"If-Match: *"}, 200},
			{"GET", []string{"If-Unmodified-Since: " + lastMod}, 200},
			{"GET", []string{"If-Unmodified-Since: Tue, 02 Jan 2024 03:04:04 GMT"}, 412},
			{"GET", []string{"If-Match: " + etag, "If-Unmodified-Since: Mon, 01 Jan 2024 00:00:00 GMT"}, 200},
			// A list's field lines are one list (RFC 9110 §5.3).
			{"GET", []string{`If-None-Match: "x"`, "If-None-Match: " + etag}, 304},
			{"GET", []string{`If-None-Match: "x"`, `If-None-Match: "y"`}, 200},
			{"GET", []string{`If-Match: "x"`, "If-Match: " + etag}, 200},
			{"GET", []string{`If-Match: "x"`, `If-Match: "y"`}, 412},
		}
		for _, tc := range tests {
			resp, got := get(t, addr, tc.method, prefix+"hello.txt", tc.headers...)
			if resp.StatusCode != tc.status {
				t.Errorf("%s %s %v: %d, want %d", tc.method, prefix, tc.headers, resp.StatusCode, tc.status)
				continue
			}
			if tc.status == 304 {
				h := resp.Header
				if got != "" || h.Get("ETag") != etag || h.Get("Content-Type") != "" ||
					h.Get("Last-Modified") != "" || h.Get("Content-Length") != "" {
					t.Errorf("%s %v: 304 with %q and headers %v", prefix, tc.headers, got, h)
				}
			}
		}
	}
	// A handler's own ETag is used instead of the generated one.
	_, addr2 := coretest.Serve(t, func(c *core.Ctx) {
		c.SetHeader("ETag", `W/"v1"`)
		body.ServeContent(c, "x.txt", time.Time{}, strings.NewReader("versioned"))
	}, core.Options{})
	if resp, _ := get(t, addr2, "GET", "/", `If-None-Match: "v1"`); resp.StatusCode != 304 {
		t.Errorf("handler's ETag: %d", resp.StatusCode)
	}
	if resp, _ := get(t, addr2, "GET", "/"); resp.Header.Get("Last-Modified") != "" {
		t.Error("Last-Modified sent for an unknown modification time")
	}
}

func TestServeHead(t *testing.T) {
	root, _ := serveTree(t)
	addr := fileServer(t, root)
	for _, prefix := range []string{"/", "/content/", "/file/"} {
		resp, got := get(t, addr, "HEAD", prefix+"big.bin")
		if resp.StatusCode != 200 || got != "" || resp.ContentLength != int64(len(bigFile)) ||
			resp.Header.Get("Content-Type") != "application/octet-stream" {
			t.Errorf("%s: %d %q length %d type %q", prefix, resp.StatusCode, got, resp.ContentLength,
				resp.Header.Get("Content-Type"))
		}
		resp, _ = get(t, addr, "HEAD", prefix+"big.bin", "Range: bytes=10-19")
		if resp.StatusCode != 206 || resp.ContentLength != 10 {
			t.Errorf("%s range: %d length %d", prefix, resp.StatusCode, resp.ContentLength)
		}
	}
	// HEAD then GET on one connection: the HEAD response must not be followed by a body.
	c := dial(t, addr)
	c.Send("HEAD /hello.txt HTTP/1.1\r\nHost: h\r\n\r\nGET /hello.txt HTTP/1.1\r\nHost: h\r\n\r\n")
	c.Response("HEAD")
	if _, got := c.Response("GET"); got != helloText {
		t.Fatalf("GET after HEAD: %q", got)
	}
}

// TestServeContentOnKeptConnection: many files in a row on one connection, pipelined, mixing
// sendfile and copied bodies, come back whole and in order.
func TestServeContentOnKeptConnection(t *testing.T) {
	root, _ := serveTree(t)
	addr := fileServer(t, root)
	c := dial(t, addr)
	var req bytes.Buffer
	names := []string{"/big.bin", "/content/hello.txt", "/hello.txt", "/content/big.bin", "/page.html"}
	for _, n := range names {
		req.WriteString("GET " + n + " HTTP/1.1\r\nHost: h\r\n\r\n")
	}
	go c.write(req.String(), false)
	for _, n := range names {
		want := files[strings.TrimPrefix(strings.TrimPrefix(n, "/content"), "/")]
		if strings.HasSuffix(n, "big.bin") {
			want = string(bigFile)
		}
		if resp, got := c.Response("GET"); got != want || resp.Close {
			t.Fatalf("%s: %d bytes, close %v", n, len(got), resp.Close)
		}
	}
}

// TestServeErrorsDropContentFields: a 412 or 416 answers with plain text, without the content's
// coding and validators the handler had set: they do not describe the error's text.
func TestServeErrorsDropContentFields(t *testing.T) {
	gz := []byte("\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff\x03\x00\x00\x00\x00\x00\x00\x00\x00\x00")
	_, addr := coretest.Serve(t, func(c *core.Ctx) {
		c.SetHeader("Content-Encoding", "gzip") // precompressed content
		body.ServeContent(c, "page.txt", fileTime, bytes.NewReader(gz))
	}, core.Options{})
	for _, tc := range []struct {
		field string
		want  int
		rng   string
	}{{"Range: bytes=100000-", 416, "bytes */20"}, {`If-Match: "nope"`, 412, ""}} {
		resp, got := get(t, addr, "GET", "/", tc.field)
		h := resp.Header
		if resp.StatusCode != tc.want || h.Get("Content-Encoding") != "" || h.Get("ETag") != "" ||
			h.Get("Last-Modified") != "" || h.Get("Content-Range") != tc.rng || !strings.HasPrefix(got, strconv.Itoa(tc.want)) {
			t.Errorf("%s: %d %q with %v", tc.field, resp.StatusCode, got, h)
		}
	}
}

// emptyReads is content whose reads return nothing and no error, for ever.
type emptyReads struct{ size int64 }

func (e emptyReads) Read([]byte) (int, error) { return 0, nil }

func (e emptyReads) Seek(off int64, whence int) (int64, error) {
	if whence == io.SeekEnd {
		return e.size + off, nil
	}
	return off, nil
}

// TestServeContentWithoutProgress: content that never gives a byte nor an error is given up,
// as bufio gives up (io.ErrNoProgress), rather than read for ever on the loop: the response is
// cut short, which closes the connection.
func TestServeContentWithoutProgress(t *testing.T) {
	_, addr := coretest.Serve(t, func(c *core.Ctx) {
		c.SetHeader("Content-Type", "text/plain")
		body.ServeContent(c, "x.txt", time.Time{}, emptyReads{10})
	}, core.Options{})
	c := dial(t, addr)
	c.Send("GET / HTTP/1.1\r\nHost: h\r\n\r\n")
	resp, err := http.ReadResponse(c.R, nil)
	if err != nil {
		t.Fatal(err)
	}
	if b, err := io.ReadAll(resp.Body); resp.ContentLength != 10 || len(b) != 0 || err != io.ErrUnexpectedEOF {
		t.Fatalf("Content-Length %d, %q, %v; want a body cut short", resp.ContentLength, b, err)
	}
}
