package http2

import (
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
// under wait.Do, until its work is done) counts against SETTINGS_MAX_CONCURRENT_STREAMS until
// the handler returns: a client cannot pile up work past the limit by resetting streams.
func TestH2ResetHandlersKeepTheirPlace(t *testing.T) {
	const max = 100 // the SETTINGS_MAX_CONCURRENT_STREAMS dwell sends
	woken := make(chan serve.Waker, max)
	done := make(chan serve.Done, max+2) // the held handlers', and the /hello requests'
	// One loop, and MaxConns 2: the handlers under way count against it too (serve's Linger),
	// and a new connection is taken again only once they have all returned.
	_, addr := startServer(t, h2Handler(woken, done), serve.Options{Loops: 1, MaxConns: 2})
	c := dialH2(t, addr)
	var held []serve.Waker
	wake := func() {
		for _, w := range held {
			w.Wake(nil)
		}
		held = nil
	}
	t.Cleanup(wake) // before the server's shutdown, which waits for them, should the test fail
	for i := range max {
		c.get(uint32(2*i+1), "/hold")
		held = append(held, receive(t, "a held handler's Waker", woken))
	}
	for i := range max {
		c.write(h2.AppendRSTStream(nil, uint32(2*i+1), h2.Cancel))
	}
	id := uint32(2*max + 1)
	c.get(id, "/hello")
	if r := c.response(id); !r.rst || r.code != h2.RefusedStream {
		t.Fatalf("a stream past %d handlers still under way: status %d, reset %v %v; want REFUSED_STREAM", max, r.status, r.rst, r.code)
	}
	wake()
	for range max {
		receive(t, "a held handler's end", done)
	}
	id += 2
	c.get(id, "/hello")
	if r := c.response(id); r.status != 200 {
		t.Fatalf("once the handlers returned: status %d, reset %v %v", r.status, r.rst, r.code)
	}
	d := dialH2(t, addr)
	d.nc.SetDeadline(time.Now().Add(testclient.Patience)) // a loop that never takes it fails the test
	d.get(1, "/hello")
	if r := d.response(1); r.status != 200 {
		t.Fatalf("a second connection: status %d", r.status)
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
