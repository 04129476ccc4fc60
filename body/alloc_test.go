//go:build !race

package body_test

import (
	"io"
	"net"
	"strings"
	"testing"

	"github.com/dwellhttp/dwell/body"
	"github.com/dwellhttp/dwell/core"
)

// roundTripper sends one fixed request and reads one fixed-size response over a kept-alive
// connection, allocating nothing itself, so that AllocsPerRun counts the server's allocations.
type roundTripper struct {
	conn net.Conn
	req  []byte
	resp []byte
}

func newRoundTripper(t *testing.T, addr, req string) *roundTripper {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	rt := &roundTripper{conn: c, req: []byte(req)}
	// Learn the response size from a first exchange.
	if _, err := c.Write(rt.req); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4096)
	n, err := c.Read(buf)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(buf[:n]), "HTTP/1.1 200 ") {
		t.Fatalf("first response %q", buf[:n])
	}
	rt.resp = make([]byte, n)
	return rt
}

func (rt *roundTripper) do(t *testing.T) {
	if _, err := rt.conn.Write(rt.req); err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadFull(rt.conn, rt.resp); err != nil {
		t.Fatal(err)
	}
}

// TestReadAllocatesNothing: reading a 64 KiB POST with body.Read, or through body.Reader,
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
				k, err := body.Read(c, buf)
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
			rt := newRoundTripper(t, addr, post(path, b, isChunked, ""))
			for range 20 {
				rt.do(t)
			}
			if n := testing.AllocsPerRun(200, func() { rt.do(t) }); n != 0 {
				t.Errorf("%s chunked=%v: %v allocations per 64 KiB upload, want 0", path, isChunked, n)
			}
		}
	}
}
