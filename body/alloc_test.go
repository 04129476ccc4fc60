//go:build !race && linux && !dwell_portable

package body_test

import (
	"testing"

	"github.com/dwellhttp/dwell/body"
	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/core/coretest"
)

// TestReadAllocatesNothing: reading a 64 KiB POST with Ctx.ReadBody, or through body.Reader,
// allocates nothing in steady state, for a declared length and for a chunked body.
func TestReadAllocatesNothing(t *testing.T) {
	buf := make([]byte, 16<<10)
	addr := startServer(t, func(c *core.Ctx) {
		n := 0
		if c.Path() == "/reader" {
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
