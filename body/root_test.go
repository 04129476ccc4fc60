package body_test

import (
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/dwellhttp/dwell/body"
	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/core/coretest"
)

// TestServeRootRefusesEscapes: no target, however encoded, serves the secret beside the root.
// The core decodes the path once, so %2e%2e and %2f arrive as ".." and "/", and %252e as "%2e".
func TestServeRootRefusesEscapes(t *testing.T) {
	root, _ := serveTree(t)
	addr := fileServer(t, root)
	tests := []struct {
		target string
		status int
	}{
		{"/../secret.txt", 400},
		{"/sub/../../secret.txt", 400},
		{"/%2e%2e/secret.txt", 400},
		{"/%2E%2E/secret.txt", 400},
		{"/sub/%2e%2e/%2e%2e/secret.txt", 400},
		{"/..%2fsecret.txt", 400},
		{"/%2e%2e%2fsecret.txt", 400},
		{"/sub%2f..%2f..%2fsecret.txt", 400},
		{"/..%5csecret.txt", 400}, // backslash
		{"/sub%5c..%5c..%5csecret.txt", 400},
		{"/hello.txt%00.png", 400},      // NUL
		{"/%252e%252e/secret.txt", 404}, // the literal directory "%2e%2e": none
		{"/escape", 404},                // an absolute symlink out of the root
		{"/escape-relative", 404},       // a relative one
		{"/file/../secret.txt", 400},    // ServeFile's precaution
		{"/file/%2e%2e/secret.txt", 400},
	}
	for _, tc := range tests {
		resp, got := get(t, addr, "GET", tc.target)
		if resp.StatusCode != tc.status || strings.Contains(got, "SECRET") {
			t.Errorf("%s: %d %q, want %d", tc.target, resp.StatusCode, got, tc.status)
		}
	}
	// What is inside stays reachable: a symlink within the root, a file whose name is an
	// encoding, dot segments that stay inside.
	for target, want := range map[string]string{
		"/inside-link":        helloText,
		"/%252e%252e":         files["%2e%2e"],
		"/./sub/./index.html": files["sub/index.html"],
		"//hello.txt":         helloText,
	} {
		if resp, got := get(t, addr, "GET", target); resp.StatusCode != 200 || got != want {
			t.Errorf("%s: %d %q, want %q", target, resp.StatusCode, got, want)
		}
	}
}

// TestServeRootDirectories: no listings; an index.html is served for its directory, which is
// redirected to its slash form first; a file named with a trailing slash is not found.
func TestServeRootDirectories(t *testing.T) {
	root, _ := serveTree(t)
	addr := fileServer(t, root)
	if resp, got := get(t, addr, "GET", "/sub/"); resp.StatusCode != 200 || got != files["sub/index.html"] ||
		resp.Header.Get("Content-Type") != "text/html; charset=utf-8" {
		t.Errorf("/sub/: %d %q", resp.StatusCode, got)
	}
	if resp, _ := get(t, addr, "GET", "/sub?x=1"); resp.StatusCode != 301 || resp.Header.Get("Location") != "sub/?x=1" {
		t.Errorf("/sub: %d Location %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	for _, target := range []string{"/nodir/", "/nodir", "/", "/file/nodir/", "/missing", "/missing/", "/hello.txt/x", "/file/missing",
		"/hello.txt/", "/sub/index.html/"} { // a file named as a directory

		if resp, got := get(t, addr, "GET", target); resp.StatusCode != 404 {
			t.Errorf("%s: %d %q, want 404", target, resp.StatusCode, got)
		}
	}
	if resp, got := get(t, addr, "GET", "/file/sub/"); resp.StatusCode != 200 || got != files["sub/index.html"] {
		t.Errorf("ServeFile of a directory: %d %q", resp.StatusCode, got)
	}
}

// TestServeSpecialFiles: a FIFO is refused without blocking the loop on its open, and the loop
// goes on serving.
func TestServeSpecialFiles(t *testing.T) {
	root, _ := serveTree(t)
	if err := syscall.Mkfifo(filepath.Join(root, "fifo"), 0o644); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	addr := fileServer(t, root)
	if status := fifoStatus(t, addr); status != 404 {
		t.Fatalf("FIFO: %d", status)
	}
	sock, err := net.Listen("unix", filepath.Join(root, "sock"))
	if err != nil {
		t.Skip("no Unix socket here:", err)
	}
	defer sock.Close()
	if resp, _ := get(t, addr, "GET", "/sock"); resp.StatusCode != 404 {
		t.Fatalf("a Unix socket: %d, want 404", resp.StatusCode)
	}
}

// fifoStatus asks for /fifo from another goroutine, and returns the status of the answer,
// which a loop blocked in the FIFO's open would never send.
func fifoStatus(t *testing.T, addr string) int {
	done := make(chan int, 1)
	go func() {
		resp, _ := get(t, addr, "GET", "/fifo")
		done <- resp.StatusCode
	}()
	return coretest.Receive(t, "an answer for a FIFO (its open blocking the loop?)", done)
}

// TestServeDirWithColon: a directory whose name has a colon is redirected to "./a:b/", which
// resolves to it, not to "a:b/", which would read as a URL of scheme "a" (RFC 3986 §4.2).
func TestServeDirWithColon(t *testing.T) {
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "a:b"), 0o755)
	os.WriteFile(filepath.Join(root, "a:b", "index.html"), []byte("x"), 0o644)
	_, addr := coretest.Serve(t, func(c *core.Ctx) { body.ServeRoot(c, root, c.Path()) }, core.Options{})
	resp, _ := get(t, addr, "GET", "/a:b")
	base, _ := url.Parse("http://h/a:b")
	ref, err := url.Parse(resp.Header.Get("Location"))
	if err != nil || resp.StatusCode != 301 || base.ResolveReference(ref).String() != "http://h/a:b/" {
		t.Fatalf("%d to %q (%v)", resp.StatusCode, resp.Header.Get("Location"), err)
	}
}

// TestServeRootPermission: a file the server may not read is answered 403. Root reads
// everything, so this runs only as another user.
func TestServeRootPermission(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("running as root, which may read any file")
	}
	root, _ := serveTree(t)
	locked := filepath.Join(root, "locked.txt")
	os.WriteFile(locked, []byte("locked"), 0o000)
	addr := fileServer(t, root)
	if resp, _ := get(t, addr, "GET", "/locked.txt"); resp.StatusCode != 403 {
		t.Fatalf("%d, want 403", resp.StatusCode)
	}
}

// TestServeRootMissingRoot: a root that does not exist is the server's fault: 500.
func TestServeRootMissingRoot(t *testing.T) {
	_, addr := coretest.Serve(t, func(c *core.Ctx) {
		body.ServeRoot(c, filepath.Join(t.TempDir(), "none"), c.Path())
	}, core.Options{})
	if resp, _ := get(t, addr, "GET", "/x"); resp.StatusCode != 500 {
		t.Fatalf("%d, want 500", resp.StatusCode)
	}
}
