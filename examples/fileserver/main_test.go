package main

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/core/coretest"
)

// startFileServer serves a small tree, with a secret file beside it, and returns the address.
func startFileServer(t *testing.T) string {
	parent := t.TempDir()
	root := filepath.Join(parent, "www")
	for name, content := range map[string]string{
		"index.html":   "<h1>home</h1>",
		"notes.txt":    "0123456789",
		"css/site.css": "h1{}",
		"data":         "\x00\x01binary",
	} {
		p := filepath.Join(root, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(content), 0o644)
	}
	os.WriteFile(filepath.Join(parent, "secret"), []byte("SECRET"), 0o644)
	os.Symlink("../secret", filepath.Join(root, "link"))
	if err := checkDir(root); err != nil {
		t.Fatal(err)
	}
	_, addr := coretest.Serve(t, fileServer(root), core.Options{})
	return addr
}

// request sends a raw request (so that the path reaches the server as written) and reads the
// response.
func request(t *testing.T, addr, method, target string, headers ...string) (*http.Response, string) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(coretest.Patience))
	req := method + " " + target + " HTTP/1.1\r\nHost: h\r\n"
	for _, h := range headers {
		req += h + "\r\n"
	}
	io.WriteString(c, req+"\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(c), &http.Request{Method: method})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, string(b)
}

func TestFileServer(t *testing.T) {
	addr := startFileServer(t)
	resp, _ := request(t, addr, "GET", "/notes.txt")
	etag, lastMod := resp.Header.Get("ETag"), resp.Header.Get("Last-Modified")
	tests := []struct {
		method, target string
		headers        []string
		status         int
		body, ctype    string
	}{
		{"GET", "/", nil, 200, "<h1>home</h1>", "text/html; charset=utf-8"},
		{"GET", "/notes.txt", nil, 200, "0123456789", "text/plain; charset=utf-8"},
		{"GET", "/css/site.css", nil, 200, "h1{}", "text/css; charset=utf-8"},
		{"GET", "/data", nil, 200, "\x00\x01binary", "application/octet-stream"},
		{"GET", "/notes.txt", []string{"Range: bytes=2-4"}, 206, "234", ""},
		{"GET", "/notes.txt", []string{"Range: bytes=-3"}, 206, "789", ""},
		{"GET", "/notes.txt", []string{"Range: bytes=10-"}, 416, "", ""},
		{"GET", "/notes.txt", []string{"If-None-Match: " + etag}, 304, "", ""},
		{"GET", "/notes.txt", []string{"If-Modified-Since: " + lastMod}, 304, "", ""},
		{"HEAD", "/notes.txt", nil, 200, "", "text/plain; charset=utf-8"},
		{"GET", "/../secret", nil, 400, "", ""},
		{"GET", "/%2e%2e/secret", nil, 400, "", ""},
		{"GET", "/css/..%2f..%2fsecret", nil, 400, "", ""},
		{"GET", "/link", nil, 404, "", ""},
		{"GET", "/missing.txt", nil, 404, "", ""},
		{"GET", "/css/", nil, 404, "", ""}, // no listing
		{"POST", "/notes.txt", nil, 405, "", ""},
	}
	for _, tc := range tests {
		resp, got := request(t, addr, tc.method, tc.target, tc.headers...)
		if resp.StatusCode != tc.status || tc.status < 300 && got != tc.body ||
			tc.ctype != "" && resp.Header.Get("Content-Type") != tc.ctype || strings.Contains(got, "SECRET") {
			t.Errorf("%s %s %v: %d %q %q", tc.method, tc.target, tc.headers, resp.StatusCode, got,
				resp.Header.Get("Content-Type"))
		}
		if tc.method == "HEAD" && resp.ContentLength != 10 {
			t.Errorf("HEAD length %d", resp.ContentLength)
		}
		if tc.status == 416 && resp.Header.Get("Content-Range") != "bytes */10" {
			t.Errorf("416 Content-Range %q", resp.Header.Get("Content-Range"))
		}
	}
}

func TestCheckDir(t *testing.T) {
	f := filepath.Join(t.TempDir(), "file")
	os.WriteFile(f, nil, 0o644)
	if checkDir(f) == nil || checkDir(f+"-missing") == nil {
		t.Fatal("a file or a missing path accepted as the root")
	}
}
