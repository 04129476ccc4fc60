package body_test

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/dwellhttp/dwell/body"
	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/core/coretest"
)

// TestServedFileFollowsChanges: a file served again after it was rewritten, replaced, deleted,
// recreated or swapped for a symbolic link is served as it is now, by ServeFile and ServeRoot
// alike, however the server keeps files it served.
func TestServedFileFollowsChanges(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "root")
	os.Mkdir(root, 0o755)
	path := filepath.Join(root, "f.txt")
	secret := filepath.Join(dir, "secret.txt")
	write := func(p, s string) {
		t.Helper()
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(secret, "secret")
	_, addr := coretest.Serve(t, func(c *core.Ctx) {
		if c.Path() == "/file" {
			body.ServeFile(c, path)
			return
		}
		body.ServeRoot(c, root, c.Path())
	}, core.Options{})
	expect := func(step string, status int, want string) {
		t.Helper()
		for _, target := range []string{"/file", "/f.txt"} {
			resp, got := get(t, addr, "GET", target)
			if resp.StatusCode != status || status == 200 && got != want {
				t.Fatalf("%s, %s: %d %q; want %d %q", step, target, resp.StatusCode, got, status, want)
			}
		}
	}
	write(path, "one")
	expect("first", 200, "one")
	expect("again", 200, "one")
	write(path, "two") // in place: the same file, the same size
	expect("rewritten", 200, "two")
	write(path+".new", "three!")
	os.Rename(path+".new", path)
	expect("replaced", 200, "three!")
	os.Remove(path)
	expect("deleted", 404, "")
	write(path, "four")
	expect("recreated", 200, "four")
	os.Remove(path)
	os.Symlink(secret, path)
	// ServeFile trusts its path and follows the link; ServeRoot must not leave the root.
	if resp, got := get(t, addr, "GET", "/file"); resp.StatusCode != 200 || got != "secret" {
		t.Fatalf("ServeFile through a symbolic link: %d %q", resp.StatusCode, got)
	}
	if resp, got := get(t, addr, "GET", "/f.txt"); resp.StatusCode != 404 {
		t.Fatalf("ServeRoot, the file swapped for a link out of the root: %d %q", resp.StatusCode, got)
	}
}

// TestServedFileReplacedWhileSending: a file replaced while a slow client still receives it is
// sent whole, as it was, to that client, while later requests get the new file.
func TestServedFileReplacedWhileSending(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "big")
	old := payload(32<<20, 1) // more than the socket buffers hold: the send parks
	if err := os.WriteFile(path, old, 0o644); err != nil {
		t.Fatal(err)
	}
	_, addr := coretest.Serve(t, func(c *core.Ctx) { body.ServeFile(c, path) }, core.Options{Loops: 1})
	if resp, got := get(t, addr, "GET", "/"); resp.StatusCode != 200 || digest([]byte(got)) != digest(old) {
		t.Fatalf("first request: %d, %d bytes", resp.StatusCode, len(got))
	}
	slow := dial(t, addr)
	slow.Send("GET / HTTP/1.1\r\nHost: h\r\n\r\n")
	// Its first bytes show the send under way, from the file as it was: the rest of the 32 MiB
	// cannot have left yet, as the client has not read it.
	resp, err := http.ReadResponse(slow.R, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := make([]byte, 64<<10)
	if _, err := io.ReadFull(resp.Body, got); err != nil {
		t.Fatal(err)
	}
	fresh := payload(1000, 2)
	os.WriteFile(path+".new", fresh, 0o644)
	if err := os.Rename(path+".new", path); err != nil {
		t.Fatal(err)
	}
	if resp, got := get(t, addr, "GET", "/"); resp.StatusCode != 200 || got != string(fresh) {
		t.Fatalf("after the replacement: %d, %d bytes", resp.StatusCode, len(got))
	}
	rest, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, rest...)
	if resp.StatusCode != 200 || len(got) != len(old) || digest(got) != digest(old) {
		t.Fatalf("the slow client got %d bytes (of %d), intact: %v", len(got), len(old), digest(got) == digest(old))
	}
}
