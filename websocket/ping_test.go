package websocket

import (
	"errors"
	"fmt"
	"testing"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/core/coretest"
	"github.com/dwellhttp/dwell/websocket/internal/frame"
)

// TestPingsAnsweredLatest: pings that arrive together are answered with one pong, the latest's
// (RFC 6455 §5.5.3), not a pong each: 1,000 pings held behind a message the handler has not
// read yet get at most one pong per read of them once it has, and the last pong answers the
// last ping.
func TestPingsAnsweredLatest(t *testing.T) {
	addr := serve(t, func(cx *core.Ctx) {
		c, err := Accept(cx, nil)
		if err != nil {
			return
		}
		// The message comes with the pings behind it, which wait in the connection's input
		// until the handler has taken the message.
		typ, msg, err := c.ReadMessage()
		if err != nil {
			return
		}
		c.WriteMessage(typ, msg)
		c.ReadMessage() // until the close
	})
	c, _ := dial(t, addr)
	batch := c.frameBytes(frame.Text, []byte("hold"), true, false, false)
	const pings = 1000
	for i := range pings {
		batch = append(batch, c.frameBytes(frame.Ping, fmt.Appendf(nil, "p%d", i), true, false, false)...)
	}
	c.write(batch)
	last := fmt.Sprintf("p%d", pings-1)
	pongs, echoed, answered := 0, false, false
	for !echoed || !answered {
		h, p := c.next()
		switch {
		case h.Opcode == frame.Pong:
			pongs++
			answered = string(p) == last
		case h.Opcode == frame.Text && string(p) == "hold":
			echoed = true
		default:
			t.Fatalf("unexpected %v frame %q", h.Opcode, p)
		}
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
