package websocket

import (
	"errors"
	"fmt"
	"testing"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/core/coretest"
	"github.com/dwellhttp/dwell/websocket/internal/frame"
)

// TestPingsAnsweredEach: while the client takes what it is sent, every ping gets its pong, in
// order, even when they come together (Autobahn's cases 2.10 and 2.11 ask it).
func TestPingsAnsweredEach(t *testing.T) {
	for _, st := range styles {
		t.Run(st.name, func(t *testing.T) {
			c, _ := dial(t, serve(t, st.h(nil)))
			var batch []byte
			for i := range 10 {
				batch = append(batch, c.frameBytes(frame.Ping, fmt.Appendf(nil, "p%d", i), true, false, false)...)
			}
			c.write(batch)
			for i := range 10 {
				c.expect(frame.Pong, fmt.Sprintf("p%d", i))
			}
		})
	}
}

// TestPingsAnsweredLatest: once the client leaves output unread, pings that come together are
// answered with one pong, the latest's (RFC 6455 §5.5.3), not a pong each: 1,000 pings sent
// at once behind 12 MiB the client has not read get at most one pong per read of them, and
// the last pong answers the last ping.
func TestPingsAnsweredLatest(t *testing.T) {
	big := make([]byte, 12<<20)
	ev := &Events{Open: func(c *Conn) { c.Send(Binary, big) }}
	_, addr := coretest.Serve(t, func(cx *core.Ctx) {
		Serve(cx, &Options{MaxQueued: 64 << 20}, ev)
	}, core.Options{WriteHighWater: 32 << 20}) // still read: under the mark
	c, _ := dial(t, addr)
	var batch []byte
	const pings = 1000
	for i := range pings {
		batch = append(batch, c.frameBytes(frame.Ping, fmt.Appendf(nil, "p%d", i), true, false, false)...)
	}
	c.write(batch)
	c.expect(frame.Binary, string(big))
	last := fmt.Sprintf("p%d", pings-1)
	pongs := 0
	for answered := false; !answered; {
		h, p := c.next()
		if h.Opcode != frame.Pong {
			t.Fatalf("unexpected %v frame %.40q", h.Opcode, p)
		}
		pongs++
		answered = string(p) == last
	}
	// One read of the input holds all of it when it was written at once, but a read may have
	// taken the start of it alone: then the rest is a second read, and a second pong.
	if pongs > 2 {
		t.Errorf("%d pongs for %d pings read at most twice", pongs, pings)
	}
	c.send(frame.Close, closePayload(1000, ""))
	c.expectClose(1000)
}

// TestPongsWithinMaxQueued: a pong is output like any other the connection queues without
// waiting: a client that leaves more than MaxQueued unread and pings gets the slow-client
// policy (the connection closed, 1008), not a pong queued behind the rest.
func TestPongsWithinMaxQueued(t *testing.T) {
	ended := make(chan error, 1)
	o := &Options{MaxQueued: 16 << 10}
	_, addr := coretest.Serve(t, func(cx *core.Ctx) {
		c, err := Accept(cx, o)
		if err != nil {
			return
		}
		// Far more than the kernel's buffers take, and under the server's high-water mark, so
		// that the connection is still read: what waits in its queue is over MaxQueued.
		if err := c.WriteMessage(Binary, make([]byte, 12<<20)); err != nil {
			ended <- err
			return
		}
		_, _, err = c.ReadMessage()
		ended <- err
	}, core.Options{WriteHighWater: 32 << 20})
	c, _ := dial(t, addr)
	c.send(frame.Ping, "are you there")
	var ce *CloseError
	if err := coretest.Receive(t, "the handler's end", ended); !errors.As(err, &ce) || ce.Code != ClosePolicyViolation {
		t.Fatalf("the handler's read ended with %v, want a 1008 CloseError", err)
	}
}
