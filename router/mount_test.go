package router

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/core/coretest"
	"github.com/dwellhttp/dwell/nethttp"
)

// echoRoute answers with what a mounted handler saw: method, full path and path values.
func echoRoute(w http.ResponseWriter, r *http.Request) {
	fmt.Fprintf(w, "%s %s ver=%q mount=%q", r.Method, r.URL.Path, r.PathValue("ver"), r.PathValue(mountParam))
}

// TestMount: a mounted handler answers its prefix and everything under it, for every method,
// with the full path; the routes beside it keep theirs.
func TestMount(t *testing.T) {
	r := New()
	r.Mount("/debug/pprof/", http.HandlerFunc(echoRoute))
	r.GET("/debug/other", func(c *core.Ctx) { c.WriteString("dwell") })
	r.Group("/api/:ver").Mount("/files", http.HandlerFunc(echoRoute))
	_, addr := coretest.Serve(t, r.Handler(), core.Options{})
	cl := coretest.Dial(t, addr)
	for _, tc := range []struct{ method, target, want string }{
		{"GET", "/debug/pprof", `GET /debug/pprof ver="" mount=""`},
		{"GET", "/debug/pprof/", `GET /debug/pprof/ ver="" mount=""`},
		{"GET", "/debug/pprof/heap?debug=1", `GET /debug/pprof/heap ver="" mount=""`},
		{"POST", "/debug/pprof/symbol", `POST /debug/pprof/symbol ver="" mount=""`},
		{"PUT", "/debug/pprof/a/b", `PUT /debug/pprof/a/b ver="" mount=""`},
		{"PATCH", "/debug/pprof/a", `PATCH /debug/pprof/a ver="" mount=""`},
		{"DELETE", "/debug/pprof/a", `DELETE /debug/pprof/a ver="" mount=""`},
		{"OPTIONS", "/debug/pprof/a", `OPTIONS /debug/pprof/a ver="" mount=""`},
		{"GET", "/debug/other", "dwell"},
		{"GET", "/api/v2/files/x/y.txt", `GET /api/v2/files/x/y.txt ver="v2" mount=""`},
		{"DELETE", "/api/v1/files", `DELETE /api/v1/files ver="v1" mount=""`},
	} {
		cl.Send(tc.method + " " + tc.target + " HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\n\r\n")
		if resp, body := cl.Response(tc.method); resp.StatusCode != 200 || body != tc.want {
			t.Errorf("%s %s: %d %q, want %q", tc.method, tc.target, resp.StatusCode, body, tc.want)
		}
	}
	cl.Send("HEAD /debug/pprof/x HTTP/1.1\r\nHost: h\r\n\r\n")
	if resp, _ := cl.Response("HEAD"); resp.StatusCode != 200 || resp.ContentLength != int64(len(`HEAD /debug/pprof/x ver="" mount=""`)) {
		t.Errorf("HEAD: %d, Content-Length %d", resp.StatusCode, resp.ContentLength)
	}
}

// TestMountRoot: a handler mounted at "/" serves every path.
func TestMountRoot(t *testing.T) {
	r := New()
	r.Mount("/", http.HandlerFunc(echoRoute))
	_, addr := coretest.Serve(t, r.Handler(), core.Options{})
	cl := coretest.Dial(t, addr)
	for _, target := range []string{"/", "/a", "/a/b/"} {
		cl.Send("GET " + target + " HTTP/1.1\r\nHost: h\r\n\r\n")
		if _, body := cl.Response("GET"); body != `GET `+target+` ver="" mount=""` {
			t.Errorf("%s: %q", target, body)
		}
	}
}

// TestMountPanics: a mount with an invalid prefix or no handler fails at registration.
func TestMountPanics(t *testing.T) {
	for _, f := range []func(){
		func() { New().Mount("debug", http.NotFoundHandler()) },
		func() { New().Mount("/debug", nil) },
		func() { New().HandleHTTP("GET", "/x", nil) },
	} {
		if msg := catchPanic(f); !strings.HasPrefix(msg, "dwell: ") {
			t.Errorf("panic %q", msg)
		}
	}
}

// TestFileServer: http.FileServer, mounted through http.StripPrefix, serves whole files (a
// large one with sendfile), ranges with 206, conditional requests with 304, and HEAD.
func TestFileServer(t *testing.T) {
	dir := t.TempDir()
	big := make([]byte, 300<<10)
	for i := range big {
		big[i] = byte(i % 251)
	}
	os.WriteFile(filepath.Join(dir, "big.bin"), big, 0o644)
	os.WriteFile(filepath.Join(dir, "small.txt"), []byte("small file\n"), 0o644)
	r := New()
	r.Mount("/files", http.StripPrefix("/files", http.FileServer(http.Dir(dir))))
	_, addr := coretest.Serve(t, r.Handler(), core.Options{})
	cl := coretest.Dial(t, addr)

	cl.Send("GET /files/big.bin HTTP/1.1\r\nHost: h\r\n\r\n")
	resp, body := cl.Response("GET")
	if resp.StatusCode != 200 || body != string(big) || resp.ContentLength != int64(len(big)) {
		t.Errorf("big file: %d, %d bytes, Content-Length %d", resp.StatusCode, len(body), resp.ContentLength)
	}
	cl.Send("GET /files/big.bin HTTP/1.1\r\nHost: h\r\nRange: bytes=100000-200009\r\n\r\n")
	resp, body = cl.Response("GET")
	if resp.StatusCode != 206 || body != string(big[100000:200010]) ||
		resp.Header.Get("Content-Range") != "bytes 100000-200009/307200" {
		t.Errorf("range: %d %v, %d bytes", resp.StatusCode, resp.Header, len(body))
	}
	cl.Send("GET /files/small.txt HTTP/1.1\r\nHost: h\r\nRange: bytes=0-4\r\n\r\n")
	if resp, body = cl.Response("GET"); resp.StatusCode != 206 || body != "small" {
		t.Errorf("small range: %d %q", resp.StatusCode, body)
	}
	cl.Send("GET /files/small.txt HTTP/1.1\r\nHost: h\r\n\r\n")
	resp, body = cl.Response("GET")
	if body != "small file\n" || resp.Header.Get("Content-Type") != "text/plain; charset=utf-8" {
		t.Errorf("small: %q %v", body, resp.Header)
	}
	cl.Send("GET /files/small.txt HTTP/1.1\r\nHost: h\r\nIf-Modified-Since: " +
		resp.Header.Get("Last-Modified") + "\r\n\r\n")
	if resp, body = cl.Response("GET"); resp.StatusCode != 304 || body != "" {
		t.Errorf("conditional: %d %q", resp.StatusCode, body)
	}
	cl.Send("HEAD /files/big.bin HTTP/1.1\r\nHost: h\r\n\r\n")
	if resp, _ = cl.Response("HEAD"); resp.StatusCode != 200 || resp.ContentLength != int64(len(big)) {
		t.Errorf("HEAD: %d %d", resp.StatusCode, resp.ContentLength)
	}
	cl.Send("GET /files/missing HTTP/1.1\r\nHost: h\r\n\r\n")
	if resp, _ = cl.Response("GET"); resp.StatusCode != 404 {
		t.Errorf("missing: %d", resp.StatusCode)
	}
}

// TestReadFrom: io.Copy to the ResponseWriter copies any reader whole, a file's rest from its
// offset and a limited reader's count, leaving both where a copy would.
func TestReadFrom(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	data := strings.Repeat("0123456789", 10000)
	os.WriteFile(path, []byte(data), 0o644)
	offsets := make(chan int64, 1)
	_, addr := coretest.Serve(t, nethttp.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/reader":
			io.Copy(w, strings.NewReader(data))
		case "/file":
			f, _ := os.Open(path)
			defer f.Close()
			f.Seek(5, io.SeekStart)
			io.Copy(w, f)
			off, _ := f.Seek(0, io.SeekCurrent)
			offsets <- off
		case "/limited":
			f, _ := os.Open(path)
			defer f.Close()
			io.CopyN(w, f, 50000)
			off, _ := f.Seek(0, io.SeekCurrent)
			offsets <- off
		}
	})), core.Options{})
	cl := coretest.Dial(t, addr)
	for _, tc := range []struct {
		path, want string
		offset     int64 // of the file after the copy; -1 for no file
	}{
		{"/reader", data, -1},
		{"/file", data[5:], int64(len(data))},
		{"/limited", data[:50000], 50000},
	} {
		cl.Send("GET " + tc.path + " HTTP/1.1\r\nHost: h\r\n\r\n")
		if _, body := cl.Response("GET"); body != tc.want {
			t.Errorf("%s: %d bytes, want %d", tc.path, len(body), len(tc.want))
		}
		if tc.offset >= 0 {
			if off := <-offsets; off != tc.offset {
				t.Errorf("%s: file offset %d after the copy, want %d", tc.path, off, tc.offset)
			}
		}
	}
}
