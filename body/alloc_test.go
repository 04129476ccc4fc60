//go:build !race && linux && !dwell_portable

package body_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/dwellhttp/dwell/body"
	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/core/coretest"
)

// TestReadAllocatesNothing: reading a 64 KiB POST with Ctx.ReadBody, or through body.Reader,
// allocates nothing in steady state, for a declared length and for a chunked body.
func TestReadAllocatesNothing(t *testing.T) {
	buf := make([]byte, 16<<10)
	_, addr := coretest.Serve(t, func(c *core.Ctx) {
		n := 0
		if string(c.Bytes().Path()) == "/reader" { // compared without a copy
			r := body.Reader(c)
			for {
				k, err := r.Read(buf)
				n += k
				if err != nil {
					break
				}
			}
		} else {
			for {
				k, err := c.ReadBody(buf)
				n += k
				if err != nil {
					break
				}
			}
		}
		if n != 64<<10 {
			c.SetStatus(500)
		}
		c.WriteString("ok")
	}, core.Options{})
	b := payload(64<<10, 1)
	for _, path := range []string{"/read", "/reader"} {
		for _, isChunked := range []bool{false, true} {
			rt := coretest.NewRoundTripper(t, addr, post(path, b, isChunked, ""))
			for range 20 {
				rt.Do(t)
			}
			if n := testing.AllocsPerRun(200, func() { rt.Do(t) }); n != 0 {
				t.Errorf("%s chunked=%v: %v allocations per 64 KiB upload, want 0", path, isChunked, n)
			}
		}
	}
}

// TestServeFileAllocations: answering GET for a file the open-file cache holds allocates once,
// in package syscall, which copies the path into a NUL-terminated string for the stat(2) that
// checks the path still names the file.
func TestServeFileAllocations(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f.txt")
	if err := os.WriteFile(p, payload(254, 3), 0o644); err != nil {
		t.Fatal(err)
	}
	_, addr := coretest.Serve(t, func(c *core.Ctx) { body.ServeFile(c, p) }, core.Options{})
	rt := coretest.NewRoundTripper(t, addr, "GET /f.txt HTTP/1.1\r\nHost: h\r\n\r\n")
	for range 20 {
		rt.Do(t)
	}
	if n := testing.AllocsPerRun(200, func() { rt.Do(t) }); n != 1 {
		t.Errorf("%v allocations per cached file request, want 1", n)
	}
}
