package body_test

import (
	"net/http"
	"runtime"
	"testing"
	"time"

	"github.com/dwellhttp/dwell/body"
	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/core/coretest"
)

// Behaviour of the core that the body package relies on.

// TestTruncatedBodyAnswer: a body cut short by the client (io.ErrUnexpectedEOF) is a body error
// like the others: a handler that then writes nothing gets the server's 400.
func TestTruncatedBodyAnswer(t *testing.T) {
	_, addr := coretest.Serve(t, func(c *core.Ctx) {
		body.Discard(c)
	}, core.Options{})
	c := dial(t, addr)
	c.Send("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 10\r\n\r\nabc")
	c.CloseWrite()
	if resp, got := c.Response("POST"); resp.StatusCode != 400 {
		t.Fatalf("%d %q, want 400", resp.StatusCode, got)
	}
}

// TestLargeWriteIsBounded: one Write of a large slice to a slow client is queued a piece at a
// time, the handler parking in between, so the server holds about WriteHighWater of it, not
// the whole slice.
func TestLargeWriteIsBounded(t *testing.T) {
	const total = 16 << 20
	content := payload(total, 5)
	_, addr := coretest.Serve(t, func(c *core.Ctx) { c.Write(content) }, core.Options{WriteHighWater: 64 << 10})
	c := dial(t, addr)
	c.SetReadBuffer(32 << 10)
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	c.Send("GET / HTTP/1.1\r\nHost: h\r\n\r\n")
	resp, err := http.ReadResponse(c.R, nil)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 16<<10)
	got := 0
	for {
		n, err := resp.Body.Read(buf)
		got += n
		if err != nil {
			break
		}
		if got < 4<<20 {
			time.Sleep(100 * time.Microsecond)
		}
	}
	runtime.ReadMemStats(&after)
	if grew := after.TotalAlloc - before.TotalAlloc; got != total || grew > 4<<20 {
		t.Fatalf("read %d bytes; allocated %d while sending %d", got, grew, total)
	}
}
