//go:build !race && linux && !dwell_portable

package http2

import (
	"encoding/binary"
	"io"
	"testing"

	"github.com/dwellhttp/dwell/core/internal/h2"
	"github.com/dwellhttp/dwell/core/internal/serve"
)

// TestH2HelloAllocatesNothing: a hello request on an HTTP/2 stream costs zero allocations in
// steady state, as on an HTTP/1.1 connection: the stream, its Ctx and its frames are the
// loop's, reused.
func TestH2HelloAllocatesNothing(t *testing.T) {
	_, addr := startServer(t, helloHandler, serve.Options{})
	c := dialH2(t, addr)
	c.until("the server's settings", func() bool { return c.acks > 0 && c.window > 0 })
	id := uint32(1)
	req := h2.AppendHeaders(nil, id, true, encodeFields(":method", "GET", ":scheme", "http",
		":authority", "localhost", ":path", "/", "user-agent", "test"), h2.MinMaxFrameSize)
	c.write(req)
	size := 0 // what one response takes, read frame by frame the first time
	for c.streams[id] == nil || !c.streams[id].end {
		_, p, ok := c.frame()
		if !ok {
			t.Fatal("the connection closed")
		}
		size += h2.HeaderLen + len(p)
	}
	if c.streams[id].status != 200 || c.br.Buffered() != 0 {
		t.Fatalf("status %d, %d bytes more", c.streams[id].status, c.br.Buffered())
	}
	resp := make([]byte, size)
	do := func() {
		id += 2
		binary.BigEndian.PutUint32(req[5:9], id)
		c.write(req)
		if _, err := io.ReadFull(c.nc, resp); err != nil {
			t.Fatal(err)
		}
	}
	for range 100 {
		do()
	}
	if n := testing.AllocsPerRun(2000, do); n != 0 {
		t.Fatalf("%v allocations per request, want 0", n)
	}
}
