//go:build !race && linux && !dwell_portable

package http1

import (
	"os"
	"strings"
	"testing"

	"github.com/dwellhttp/dwell/core/internal/serve"
	"github.com/dwellhttp/dwell/internal/testclient"
)

// roundTripper sends one fixed request and reads one fixed-size response over a kept-alive
// connection, allocating nothing itself, so that AllocsPerRun counts the server's allocations.
type roundTripper = testclient.RoundTripper

func newRoundTripper(t *testing.T, addr, req string) *roundTripper {
	t.Helper()
	return testclient.NewRoundTripper(t, addr, req)
}

// TestHelloAllocatesNothing: a keep-alive hello request costs zero allocations in steady state.
func TestHelloAllocatesNothing(t *testing.T) {
	_, addr := startServer(t, helloHandler, serve.Options{})
	rt := newRoundTripper(t, addr, "GET / HTTP/1.1\r\nHost: localhost\r\nUser-Agent: test\r\nAccept: */*\r\n\r\n")
	for range 100 {
		rt.Do(t)
	}
	if n := testing.AllocsPerRun(2000, func() { rt.Do(t) }); n != 0 {
		t.Fatalf("%v allocations per request, want 0", n)
	}
}

// TestPipelinedAllocatesNothing: eight pipelined requests per write, zero allocations.
func TestPipelinedAllocatesNothing(t *testing.T) {
	_, addr := startServer(t, helloHandler, serve.Options{})
	rt := newRoundTripper(t, addr, "GET /p?x=1 HTTP/1.1\r\nHost: localhost\r\n\r\n")
	rt.Pipeline(8)
	for range 50 {
		rt.Do(t)
	}
	if n := testing.AllocsPerRun(500, func() { rt.Do(t) }); n != 0 {
		t.Fatalf("%v allocations per 8 pipelined requests, want 0", n)
	}
}

// TestReadBodyAllocatesNothing: reading a 64 KiB POST with ReadBody allocates nothing in the core.
func TestReadBodyAllocatesNothing(t *testing.T) {
	buf := make([]byte, 16<<10)
	_, addr := startServer(t, func(c *serve.Ctx) {
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
	}, serve.Options{})
	body := make([]byte, 64<<10)
	req := "POST /upload HTTP/1.1\r\nHost: localhost\r\nContent-Length: 65536\r\n\r\n" + string(body)
	rt := newRoundTripper(t, addr, req)
	for range 20 {
		rt.Do(t)
	}
	if n := testing.AllocsPerRun(200, func() { rt.Do(t) }); n != 0 {
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
	_, addr := startServer(t, func(c *serve.Ctx) {
		n, length := int64(small), "254"
		if string(c.Bytes().Path()) == "/large" { // compared without a copy
			n, length = large, "262144"
		}
		c.SetHeader("Content-Length", length)
		c.SendFile(f, 0, n)
	}, serve.Options{})
	for _, path := range []string{"/small", "/large"} {
		rt := newRoundTripper(t, addr, "GET "+path+" HTTP/1.1\r\nHost: localhost\r\n\r\n")
		for range 50 {
			rt.Do(t)
		}
		if n := testing.AllocsPerRun(500, func() { rt.Do(t) }); n != 0 {
			t.Errorf("%s: %v allocations per request, want 0", path, n)
		}
	}
}

// TestSetValueAllocations: a handler that sets three values and reads them back allocates
// nothing, its values inline in the Ctx; a fifth value, past the inline ones, costs its node.
func TestSetValueAllocations(t *testing.T) {
	for _, tc := range []struct {
		values int
		allocs float64
	}{{3, 0}, {serve.InlineValues, 0}, {serve.InlineValues + 1, 1}} {
		_, addr := startServer(t, func(c *serve.Ctx) {
			for i := range tc.values {
				c.SetValue(valueKey(i), "v") // neither boxing allocates: a small integer, a constant
			}
			for i := range tc.values {
				if c.Value(valueKey(i)) != "v" {
					c.SetStatus(500)
				}
			}
			helloHandler(c)
		}, serve.Options{})
		rt := newRoundTripper(t, addr, "GET / HTTP/1.1\r\nHost: localhost\r\n\r\n")
		for range 100 {
			rt.Do(t)
		}
		if n := testing.AllocsPerRun(1000, func() { rt.Do(t) }); n != tc.allocs {
			t.Errorf("%d values: %v allocations per request, want %v", tc.values, n, tc.allocs)
		}
	}
}

// TestBytesIteratorsAllocateNothing: a handler that ranges over the request's fields, a field's
// values and a query parameter's values through the Bytes view allocates nothing: the
// iterators are small enough to inline, so neither they nor the loops' bodies reach the heap.
func TestBytesIteratorsAllocateNothing(t *testing.T) {
	_, addr := startServer(t, func(c *serve.Ctx) {
		n := 0
		for name, value := range c.Bytes().Headers() {
			n += len(name) + len(value)
		}
		for v := range c.Bytes().HeaderValues("accept") {
			n += len(v)
		}
		for v := range c.Bytes().QueryValues("q") {
			n += len(v)
		}
		if n == 0 {
			c.SetStatus(500)
		}
		c.WriteString("ok")
	}, serve.Options{})
	rt := newRoundTripper(t, addr, "GET /?q=1&q=2 HTTP/1.1\r\nHost: localhost\r\nAccept: a\r\nAccept: b\r\n\r\n")
	for range 100 {
		rt.Do(t)
	}
	if n := testing.AllocsPerRun(1000, func() { rt.Do(t) }); n != 0 {
		t.Fatalf("%v allocations per request, want 0", n)
	}
}
