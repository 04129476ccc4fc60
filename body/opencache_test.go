//go:build linux

package body

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/core/coretest"
)

// openIn counts this process's descriptors open on files in dir.
func openIn(t *testing.T, dir string) int {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, fd := range fds {
		if target, err := os.Readlink(filepath.Join("/proc/self/fd", fd.Name())); err == nil && strings.HasPrefix(target, dir+"/") {
			n++
		}
	}
	return n
}

// TestOpenFilesKeptAndBounded: a file served again is served from the descriptor kept for it;
// no more than maxOpenFiles stay open; files left unserved for two sweeps are closed.
func TestOpenFilesKeptAndBounded(t *testing.T) {
	openFiles.mu.Lock()
	idle := openFileIdle
	openFileIdle = time.Hour // no sweep of its own during the test
	openFiles.mu.Unlock()
	defer func() {
		openFiles.mu.Lock()
		openFileIdle = idle
		openFiles.mu.Unlock()
	}()
	dir := t.TempDir()
	const n = maxOpenFiles + 36
	for i := range n {
		os.WriteFile(filepath.Join(dir, fmt.Sprint(i)), []byte(fmt.Sprint("file ", i)), 0o644)
	}
	_, addr := coretest.Serve(t, func(c *core.Ctx) {
		ServeFile(c, filepath.Join(dir, c.Path()))
	}, core.Options{})
	fetch := func(i int) {
		t.Helper()
		resp, err := http.Get(fmt.Sprintf("http://%s/%d", addr, i))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(b) != fmt.Sprint("file ", i) {
			t.Fatalf("file %d: %q", i, b)
		}
	}
	fetch(0)
	first := openFiles.lookup(filepath.Join(dir, "0"))
	fetch(0)
	if first == nil || openFiles.lookup(filepath.Join(dir, "0")) != first {
		t.Fatal("a file served twice was not served from the descriptor kept for it")
	}
	for i := range n {
		fetch(i)
	}
	if k := openIn(t, dir); k > maxOpenFiles {
		t.Fatalf("%d files served: %d descriptors open on them, more than %d", n, k, maxOpenFiles)
	}
	for i := n - 10; i < n; i++ { // the most recently used are still there
		if openFiles.lookup(filepath.Join(dir, fmt.Sprint(i))) == nil {
			t.Fatalf("file %d, among the last served, was let go", i)
		}
	}
	openFiles.sweepNow()
	fetch(n - 1)
	openFiles.sweepNow()
	if k := openIn(t, dir); k != 1 || openFiles.lookup(filepath.Join(dir, fmt.Sprint(n-1))) == nil {
		t.Fatalf("after two sweeps, with one file served in between: %d descriptors open", k)
	}
}

// lookup returns the cached file for key, or nil.
func (fc *fileCache) lookup(key string) *cachedFile {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	return fc.entries[key]
}

// sweepNow does what a sweep does, now.
func (fc *fileCache) sweepNow() {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	fc.closeIdle()
}

// A file served from the cache carries the same validators as when it was opened, and a file
// whose modification time changed gets new ones (it is opened afresh).
func TestCachedFileValidators(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "v.txt")
	os.WriteFile(name, []byte("version"), 0o644)
	_, addr := coretest.Serve(t, func(c *core.Ctx) { ServeFile(c, name) }, core.Options{})
	validators := func() (lastModified, etag string) {
		t.Helper()
		resp, err := http.Get("http://" + addr + "/")
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.Header.Get("Last-Modified"), resp.Header.Get("ETag")
	}
	check := func(mtime time.Time) {
		t.Helper()
		wantLM, wantTag := formatTime(mtime.Truncate(time.Second)), makeETag(mtime, int64(len("version")))
		for i := range 2 { // opened, then from the cache
			if lm, tag := validators(); lm != wantLM || tag != wantTag {
				t.Fatalf("request %d: Last-Modified %q, ETag %s; want %q, %s", i, lm, tag, wantLM, wantTag)
			}
		}
		if openFiles.lookup(name) == nil {
			t.Fatal("the file is not in the cache")
		}
	}
	fi, err := os.Stat(name)
	if err != nil {
		t.Fatal(err)
	}
	check(fi.ModTime())
	later := fi.ModTime().Add(time.Hour)
	if err := os.Chtimes(name, later, later); err != nil {
		t.Fatal(err)
	}
	check(later)
}
