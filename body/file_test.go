package body

import (
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

func TestCleanName(t *testing.T) {
	for name, want := range map[string]string{
		"":              ".",
		"/":             ".",
		"a.txt":         "a.txt",
		"/a/b.txt":      "a/b.txt",
		"//a//./b/":     "a/b",
		"/a/..b/c..":    "a/..b/c..", // dots inside a segment are a name
		"/%2e%2e/x":     "%2e%2e/x",  // still encoded: a literal name
		"/a/.../b":      "a/.../b",
		"/.hidden/file": ".hidden/file",
	} {
		if got, ok := cleanName(name); !ok || got != want {
			t.Errorf("cleanName(%q) = %q, %v; want %q", name, got, ok, want)
		}
	}
	for _, name := range []string{"..", "/..", "/../x", "/a/../b", "a/..", "/a\\b", "/a\x00b"} {
		if got, ok := cleanName(name); ok {
			t.Errorf("cleanName(%q) accepted as %q", name, got)
		}
	}
}

// TestStatusFor maps open errors, including os.Root's own error for an escape and the
// permission error that tests running as root cannot provoke on a real file.
func TestHasDotDot(t *testing.T) {
	for p, want := range map[string]bool{
		"":           false,
		"/":          false,
		"..":         true,
		"/..":        true,
		"/../":       true,
		"/a/../b":    true,
		"a/..":       true,
		"/a/..b/c..": false, // dots inside a segment are a name
		"/...":       false,
		"/.":         false,
		"/a/./b":     false,
		"//..//":     true,
		"/a..":       false,
	} {
		if got := hasDotDot(p); got != want {
			t.Errorf("hasDotDot(%q) = %v, want %v", p, got, want)
		}
		if got := hasDotDot([]byte(p)); got != want {
			t.Errorf("hasDotDot([]byte(%q)) = %v, want %v", p, got, want)
		}
	}
}

func TestStatusFor(t *testing.T) {
	dir := t.TempDir()
	os.Symlink("/", filepath.Join(dir, "out"))
	rt, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	_, escape := rt.Open("out/etc")
	if escape == nil {
		t.Fatal("os.Root followed a symlink out")
	}
	for _, tc := range []struct {
		err  error
		want int
	}{
		{&fs.PathError{Op: "open", Path: "x", Err: syscall.ENOENT}, 404},
		{&fs.PathError{Op: "open", Path: "x", Err: syscall.EACCES}, 403},
		{&fs.PathError{Op: "open", Path: "x", Err: syscall.EPERM}, 403},
		{&fs.PathError{Op: "open", Path: "x", Err: syscall.ENOTDIR}, 404},
		{&fs.PathError{Op: "open", Path: "x", Err: syscall.ELOOP}, 404},
		{&fs.PathError{Op: "open", Path: "x", Err: syscall.EIO}, 500},
		{&fs.PathError{Op: "open", Path: "x", Err: syscall.EMFILE}, 500},
		{escape, 404},
	} {
		if got := statusFor(tc.err); got != tc.want {
			t.Errorf("statusFor(%v) = %d, want %d", tc.err, got, tc.want)
		}
	}
}
