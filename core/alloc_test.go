//go:build !race && linux && !dwell_portable

package core

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
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
	cr := &countingReader{r: c}
	br := bufio.NewReader(cr)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		t.Fatal(err)
	}
	rt.resp = make([]byte, cr.n-br.Buffered())
	return rt
}

type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

func (rt *roundTripper) do(t *testing.T) {
	if _, err := rt.conn.Write(rt.req); err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadFull(rt.conn, rt.resp); err != nil {
		t.Fatal(err)
	}
}

// TestHelloAllocatesNothing: a keep-alive hello request costs zero allocations in steady state.
func TestHelloAllocatesNothing(t *testing.T) {
	_, addr := startServer(t, helloHandler, Options{})
	rt := newRoundTripper(t, addr, "GET / HTTP/1.1\r\nHost: localhost\r\nUser-Agent: test\r\nAccept: */*\r\n\r\n")
	for range 100 {
		rt.do(t)
	}
	if n := testing.AllocsPerRun(2000, func() { rt.do(t) }); n != 0 {
		t.Fatalf("%v allocations per request, want 0", n)
	}
}

// TestPipelinedAllocatesNothing: eight pipelined requests per write, zero allocations.
func TestPipelinedAllocatesNothing(t *testing.T) {
	_, addr := startServer(t, helloHandler, Options{})
	req := ""
	for range 8 {
		req += "GET /p?x=1 HTTP/1.1\r\nHost: localhost\r\n\r\n"
	}
	rt := newRoundTripper(t, addr, "GET /p?x=1 HTTP/1.1\r\nHost: localhost\r\n\r\n")
	one := len(rt.resp)
	rt.req = []byte(req)
	rt.resp = make([]byte, 8*one)
	for range 50 {
		rt.do(t)
	}
	if n := testing.AllocsPerRun(500, func() { rt.do(t) }); n != 0 {
		t.Fatalf("%v allocations per 8 pipelined requests, want 0", n)
	}
}

// TestReadBodyAllocatesNothing: reading a 64 KiB POST with ReadBody allocates nothing in the core.
func TestReadBodyAllocatesNothing(t *testing.T) {
	buf := make([]byte, 16<<10)
	_, addr := startServer(t, func(c *Ctx) {
		n := 0
		for {
			k, err := c.ReadBody(buf)
			n += k
			if err != nil {
				break
			}
		}
		if n != 64<<10 {
			c.SetStatus(500)
		}
	}, Options{})
	body := make([]byte, 64<<10)
	req := "POST /upload HTTP/1.1\r\nHost: localhost\r\nContent-Length: 65536\r\n\r\n" + string(body)
	rt := newRoundTripper(t, addr, req)
	for range 20 {
		rt.do(t)
	}
	if n := testing.AllocsPerRun(200, func() { rt.do(t) }); n != 0 {
		t.Fatalf("%v allocations per 64 KiB upload, want 0", n)
	}
}

// TestSendFileAllocatesNothing: sending a small file (copied) and a large one (sendfile) from
// an open *os.File allocates nothing in the core.
func TestSendFileAllocatesNothing(t *testing.T) {
	const small, large = 254, 256 << 10
	path := writeFile(t, strings.Repeat("f", large))
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	_, addr := startServer(t, func(c *Ctx) {
		n, length := int64(small), "254"
		if string(c.PathBytes()) == "/large" { // compared without a copy
			n, length = large, "262144"
		}
		c.SetHeader("Content-Length", length)
		c.SendFile(f, 0, n)
	}, Options{})
	for _, path := range []string{"/small", "/large"} {
		rt := newRoundTripper(t, addr, "GET "+path+" HTTP/1.1\r\nHost: localhost\r\n\r\n")
		for range 50 {
			rt.do(t)
		}
		if n := testing.AllocsPerRun(500, func() { rt.do(t) }); n != 0 {
			t.Errorf("%s: %v allocations per request, want 0", path, n)
		}
	}
}
