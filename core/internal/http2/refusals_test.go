package http2

import (
	"context"
	"testing"
	"time"

	"github.com/dwellhttp/dwell/core/internal/h2"
	"github.com/dwellhttp/dwell/core/internal/serve"
	"github.com/dwellhttp/dwell/internal/testclient"
)

// What a client's frames can make the server refuse — a stream, or the whole connection — and
// the bounds on what they can make it do for nothing: the streams a connection may have under
// way, and the resets it may cause, whichever side sends them.

// TestH2ResetHandlersKeepTheirPlace: a stream reset while its handler still runs (held, as
// under wait.Do, until its work is done) keeps its place among the SETTINGS_MAX_CONCURRENT_STREAMS
// handlers until the handler returns: a client cannot pile up work past the limit by resetting
// streams. The client, which counts the reset streams as closed, may open as many again: they
// wait, and start one for each handler that returns (one reset while it waits never starts);
// a stream past the limit of open streams is refused.
func TestH2ResetHandlersKeepTheirPlace(t *testing.T) {
	const max = 100 // the SETTINGS_MAX_CONCURRENT_STREAMS dwell sends
	woken := make(chan serve.Waker, 2*max)
	done := make(chan serve.Done, 2*max)
	// One loop, and MaxConns 2: the handlers under way count against it too (serve's Linger),
	// and a new connection is taken again only once they have all returned.
	_, addr := startServer(t, h2Handler(woken, done), serve.Options{Loops: 1, MaxConns: 2})
	c := dialH2(t, addr)
	var held []serve.Waker
	hold := func(n int) {
		for range n {
			held = append(held, receive(t, "a held handler's Waker", woken))
		}
	}
	wake := func(n int) {
		for _, w := range held[:n] {
			w.Wake(nil)
		}
		held = held[n:]
	}
	t.Cleanup(func() { // before the server's shutdown, which waits for them, should the test fail
		for len(woken) > 0 {
			held = append(held, <-woken)
		}
		wake(len(held))
	})
	// ping waits for a PING's ACK: the server has handled every frame sent before it.
	pings := 0
	ping := func() {
		c.write(h2.AppendPing(nil, false, [8]byte{byte(pings)}))
		pings++
		c.until("the PING's ACK", func() bool { return len(c.pings) == pings })
	}
	// noneStarted makes sure that no handler has started since: two PINGs, each sent once the
	// previous one's ACK came, give the server a turn to start what it would.
	noneStarted := func(what string) {
		ping()
		ping()
		if len(woken) > 0 {
			t.Fatalf("%s: %d handlers more started", what, len(woken))
		}
	}
	for i := range max {
		c.get(uint32(2*i+1), "/hold")
	}
	hold(max)
	for i := range max {
		c.write(h2.AppendRSTStream(nil, uint32(2*i+1), h2.Cancel))
	}
	first := uint32(2*max + 1)
	for i := range uint32(max) {
		c.get(first+2*i, "/hold")
	}
	noneStarted("streams opened while the reset ones' handlers were under way")
	over := first + 2*max
	c.get(over, "/hello")
	if r := c.response(over); !r.rst || r.code != h2.RefusedStream {
		t.Fatalf("a stream past %d open: status %d, reset %v %v; want REFUSED_STREAM", max, r.status, r.rst, r.code)
	}
	c.write(h2.AppendRSTStream(nil, first, h2.Cancel))
	ping() // the reset handled before a place frees: the Waker reaches the loop by another way
	wake(1)
	hold(1)
	noneStarted("once one handler returned")
	wake(max - 1) // the rest of the reset streams'
	hold(max - 2) // the waiting streams' but the one reset
	noneStarted("once every reset stream's handler returned")
	wake(max - 1)
	for i := uint32(1); i < max; i++ {
		if r := c.response(first + 2*i); r.status != 200 {
			t.Fatalf("waiting stream %d: status %d, reset %v %v", first+2*i, r.status, r.rst, r.code)
		}
	}
	for range 2*max - 1 {
		receive(t, "a handler's end", done)
	}
	if len(done) > 0 {
		t.Fatalf("%d handlers more ended: the waiting stream reset had its handler run", len(done))
	}
	d := dialH2(t, addr)
	d.nc.SetDeadline(time.Now().Add(testclient.Patience)) // a loop that never takes it fails the test
	d.get(1, "/hello")
	if r := d.response(1); r.status != 200 {
		t.Fatalf("a second connection: status %d", r.status)
	}
}

// TestH2ShutdownGraceRefusesWaiting: when a shutdown's grace period ends, a stream still
// waiting for a handler's place is refused (REFUSED_STREAM: never processed, safe to send again)
// rather than started; the connection closes once the handlers holding the places return.
func TestH2ShutdownGraceRefusesWaiting(t *testing.T) {
	const max = 100
	woken := make(chan serve.Waker, max)
	done := make(chan serve.Done, max+1)
	s, addr := startServer(t, h2Handler(woken, done), serve.Options{Loops: 1})
	c := dialH2(t, addr)
	held := make([]serve.Waker, 0, max)
	for i := range max {
		c.get(uint32(2*i+1), "/hold")
	}
	for range max {
		held = append(held, receive(t, "a held handler's Waker", woken))
	}
	t.Cleanup(func() { // should the test fail before it wakes them
		for _, w := range held {
			w.Wake(nil)
		}
	})
	for i := range max {
		c.write(h2.AppendRSTStream(nil, uint32(2*i+1), h2.Cancel))
	}
	waiting := uint32(2*max + 1)
	c.get(waiting, "/hello") // waits: the reset streams' handlers hold every place
	c.write(h2.AppendPing(nil, false, [8]byte{}))
	c.until("the PING's ACK", func() bool { return len(c.pings) == 1 }) // the stream is open
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := s.Shutdown(ctx); err != context.Canceled {
		t.Fatalf("Shutdown: %v", err)
	}
	if r := c.response(waiting); !r.rst || r.code != h2.RefusedStream {
		t.Fatalf("the waiting stream: status %d, reset %v %v; want REFUSED_STREAM", r.status, r.rst, r.code)
	}
	for _, w := range held {
		w.Wake(nil)
	}
	held = nil
	for range max {
		receive(t, "a held handler's end", done)
	}
	for {
		if _, _, ok := c.frame(); !ok {
			break // the connection closed after the handlers
		}
	}
	if len(done) > 0 {
		t.Fatal("the refused stream's handler ran")
	}
}

// TestH2StreamErrors: a malformed request is refused on its stream (RST_STREAM), and the
// connection goes on.
func TestH2StreamErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		send func(c *h2client)
		code h2.ErrCode
	}{
		{"upper-case field name", func(c *h2client) {
			c.request(1, true, ":method", "GET", ":scheme", "http", ":path", "/hello", "X-Upper", "1")
		}, h2.ProtocolError},
		{"connection-specific field", func(c *h2client) {
			c.request(1, true, ":method", "GET", ":scheme", "http", ":path", "/hello", "connection", "close")
		}, h2.ProtocolError},
		{"no :path", func(c *h2client) { c.request(1, true, ":method", "GET", ":scheme", "http") }, h2.ProtocolError},
		{"DATA past Content-Length", func(c *h2client) {
			c.request(1, false, ":method", "POST", ":scheme", "http", ":path", "/echo", "content-length", "2")
			c.data(1, true, []byte("abc"))
		}, h2.ProtocolError},
		{"DATA short of Content-Length", func(c *h2client) {
			c.request(1, false, ":method", "POST", ":scheme", "http", ":path", "/echo", "content-length", "4")
			c.data(1, true, []byte("abc"))
		}, h2.ProtocolError},
		{"stream window past 2^31-1", func(c *h2client) {
			c.request(1, false, ":method", "POST", ":scheme", "http", ":path", "/echo")
			c.write(h2.AppendWindowUpdate(nil, 1, 1<<31-1))
		}, h2.FlowControlError},
		{"depends on itself", func(c *h2client) {
			c.write(h2.AppendHeader(nil, h2.Header{Length: 5, Type: h2.TypePriority, StreamID: 1}))
			c.write([]byte{0, 0, 0, 1, 16})
		}, h2.ProtocolError},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, addr := startServer(t, h2Handler(nil, nil), serve.Options{})
			c := dialH2(t, addr)
			tc.send(c)
			if r := c.response(1); !r.rst || r.code != tc.code {
				t.Fatalf("stream 1: status %d, reset %v, code %v; want a reset with %v", r.status, r.rst, r.code, tc.code)
			}
			c.get(3, "/hello")
			if r := c.response(3); r.status != 200 {
				t.Fatalf("the connection did not go on: %d", r.status)
			}
		})
	}
}

// TestH2ConnectionErrors: what breaks the connection's rules gets GOAWAY with its code, and
// the close.
func TestH2ConnectionErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		send func(c *h2client)
		code h2.ErrCode
	}{
		{"DATA on an idle stream", func(c *h2client) { c.data(1, true, []byte("x")) }, h2.ProtocolError},
		{"HEADERS on an even stream", func(c *h2client) { c.get(2, "/hello") }, h2.ProtocolError},
		{"frame over SETTINGS_MAX_FRAME_SIZE", func(c *h2client) {
			c.data(1, true, make([]byte, h2.MinMaxFrameSize+1))
		}, h2.FrameSizeError},
		{"connection window past 2^31-1", func(c *h2client) {
			c.write(h2.AppendWindowUpdate(nil, 0, 1<<31-1))
		}, h2.FlowControlError},
		{"HEADERS interrupted", func(c *h2client) {
			c.write(h2.AppendHeader(nil, h2.Header{Length: 1, Type: h2.TypeHeaders, StreamID: 1}))
			c.write([]byte{0x82})
			c.write(h2.AppendPing(nil, false, [8]byte{}))
		}, h2.ProtocolError},
		{"CONTINUATION flood", func(c *h2client) {
			b := h2.AppendHeader(nil, h2.Header{Length: 1, Type: h2.TypeHeaders, StreamID: 1})
			b = append(b, 0x82)
			frag := make([]byte, 16<<10)
			for i := 0; i < 5; i++ {
				b = h2.AppendHeader(b, h2.Header{Length: uint32(len(frag)), Type: h2.TypeContinuation, StreamID: 1})
				b = append(b, frag...)
			}
			c.flood(b)
		}, h2.EnhanceYourCalm},
		{"HPACK index out of the table", func(c *h2client) {
			c.write(h2.AppendHeaders(nil, 1, true, []byte{0xff, 0x7f}, h2.MinMaxFrameSize))
		}, h2.CompressionError},
		{"PING flood", func(c *h2client) {
			var b []byte
			for range h2.CalmMax + 1 {
				b = h2.AppendPing(b, false, [8]byte{})
			}
			c.flood(b)
		}, h2.EnhanceYourCalm},
		{"WINDOW_UPDATE flood", func(c *h2client) {
			var b []byte
			for range h2.CalmMax + 1 {
				b = h2.AppendWindowUpdate(b, 0, 1)
			}
			c.flood(b)
		}, h2.EnhanceYourCalm},
		{"empty CONTINUATION flood", func(c *h2client) {
			b := h2.AppendHeader(nil, h2.Header{Length: 1, Type: h2.TypeHeaders, StreamID: 1})
			b = append(b, 0x82)
			for range h2.CalmMax + 1 {
				b = h2.AppendHeader(b, h2.Header{Type: h2.TypeContinuation, StreamID: 1})
			}
			c.flood(b)
		}, h2.EnhanceYourCalm},
		{"rapid reset", func(c *h2client) {
			var b []byte
			for id := uint32(1); id < 2*h2.FreeResets+4; id += 2 {
				b = h2.AppendHeaders(b, id, false, encodeFields(":method", "POST", ":scheme", "http", ":path", "/echo"), h2.MinMaxFrameSize)
				b = h2.AppendRSTStream(b, id, h2.Cancel)
			}
			c.flood(b)
		}, h2.EnhanceYourCalm},
		{"resets the server is made to send", func(c *h2client) {
			var b []byte
			for id := uint32(1); id < 2*h2.FreeResets+4; id += 2 {
				b = h2.AppendHeaders(b, id, false, encodeFields(":method", "POST", ":scheme", "http", ":path", "/echo"), h2.MinMaxFrameSize)
				b = h2.AppendWindowUpdate(b, id, 0) // a stream error: the server resets the stream
			}
			c.flood(b)
		}, h2.EnhanceYourCalm},
		{"streams refused over the limit", func(c *h2client) {
			var b []byte
			post := encodeFields(":method", "POST", ":scheme", "http", ":path", "/echo")
			for id := uint32(1); id < 2*(100+h2.FreeResets)+4; id += 2 {
				b = h2.AppendHeaders(b, id, false, post, h2.MinMaxFrameSize) // the first 100 wait for their bodies
			}
			c.flood(b)
		}, h2.EnhanceYourCalm},
		{"a closed stream's HEADERS", func(c *h2client) {
			c.get(1, "/hello")
			c.response(1)
			c.get(1, "/hello")
		}, h2.StreamClosed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, addr := startServer(t, h2Handler(nil, nil), serve.Options{})
			c := dialH2(t, addr)
			tc.send(c)
			if code := c.connError(); code != tc.code {
				t.Fatalf("GOAWAY %v, want %v", code, tc.code)
			}
		})
	}
}

// TestH2NotFlood: a client that works — thousands of requests, with PINGs, window updates and
// a few resets among them, its own and the server's — never runs out of the bounds a flood
// meets. DATA on a stream that has ended (as when a reset crosses DATA in flight) is answered
// with RST_STREAM each time, but is not counted as a reset: here it follows every response.
func TestH2NotFlood(t *testing.T) {
	_, addr := startServer(t, h2Handler(nil, nil), serve.Options{})
	c := dialH2(t, addr)
	for i := range 3000 {
		id := uint32(2*i + 1)
		if i%10 == 9 {
			c.request(id, false, ":method", "POST", ":scheme", "http", ":path", "/echo")
			if i%20 == 9 {
				c.write(h2.AppendRSTStream(nil, id, h2.Cancel))
			} else {
				c.write(h2.AppendWindowUpdate(nil, id, 0)) // the server resets it
			}
			continue
		}
		c.get(id, "/hello")
		c.write(h2.AppendPing(nil, false, [8]byte{byte(i)}))
		c.write(h2.AppendWindowUpdate(nil, 0, 1))
		if r := c.response(id); r.status != 200 {
			t.Fatalf("request %d: %d", i, r.status)
		}
		c.data(id, false, []byte("x")) // after its END_STREAM: STREAM_CLOSED
		delete(c.streams, id)
	}
	if c.goAway != nil {
		t.Fatalf("GOAWAY %+v", *c.goAway)
	}
}
