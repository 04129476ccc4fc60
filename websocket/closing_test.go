package websocket

import (
	"errors"
	"testing"
	"time"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/core/coretest"
	"github.com/dwellhttp/dwell/internal/bufpool"
	"github.com/dwellhttp/dwell/websocket/internal/frame"
)

// TestMessageTimeoutEndsWithTheMessage: a message whose header came in one read and its
// payload in the next, handed on without a copy, ends its MessageTimeout: the idle connection
// is not failed later for a message "not finished in time".
func TestMessageTimeoutEndsWithTheMessage(t *testing.T) {
	remotes := make(chan *Remote, 1)
	o := &Options{MessageTimeout: time.Hour, PingInterval: -1}
	ev := &Events{
		Open:    func(c *Conn) { remotes <- c.Remote() },
		Message: func(c *Conn, typ MessageType, data []byte) { c.Send(typ, data) },
	}
	c, _ := dial(t, serve(t, func(cx *core.Ctx) { Serve(cx, o, ev) }))
	r := <-remotes
	body := []byte("hello")
	fb := c.frameBytes(frame.Text, body, true, false, false)
	hdr, payload := fb[:len(fb)-len(body)], fb[len(fb)-len(body):]
	// A ping and the text frame's header in one write: the pong says the server read both.
	c.write(append(c.frameBytes(frame.Ping, []byte("p"), true, false, false), hdr...))
	c.expect(frame.Pong, "p")
	var started int32
	r.do(func() { started = r.c.msgSince })
	if started == 0 {
		t.Fatal("no MessageTimeout running for a message begun")
	}
	c.write(payload)
	c.expect(frame.Text, "hello")
	var since int32
	r.do(func() { since = r.c.msgSince })
	if since != 0 {
		t.Fatal("MessageTimeout still runs for a message delivered")
	}
}

// TestSendPreparedBackpressure: a prepared message queued past the high-water mark says so to
// the Remote's sends (which answer from what the loop publishes), as Send's do.
func TestSendPreparedBackpressure(t *testing.T) {
	remotes := make(chan *Remote, 1)
	_, addr := coretest.Serve(t, func(cx *core.Ctx) {
		if c, err := Serve(cx, &Options{MaxQueued: 256 << 20, PingInterval: -1}, &Events{}); err == nil {
			remotes <- c.Remote()
		}
	}, core.Options{WriteHighWater: 64 << 10})
	dial(t, addr) // reads nothing more
	r := <-remotes
	pm := NewPreparedMessage(Binary, make([]byte, 1<<20))
	var got []SendResult
	for range 64 { // more than the sockets' buffers take: the rest waits in the output
		got = append(got, r.SendPrepared(pm))
		r.Err() // the loop has run the send posted before
		if got[len(got)-1] == SendBackpressure {
			break
		}
	}
	if got[len(got)-1] != SendBackpressure {
		t.Fatalf("64 MiB queued for a client that reads nothing, no SendBackpressure: %v", got)
	}
}

// TestEmptyCloseCode: a close frame without a status is reported as CloseNoStatus (1005), as
// gorilla and coder report it, and answered with an empty close frame.
func TestEmptyCloseCode(t *testing.T) {
	errs := make(chan error, 1)
	ev := &Events{Close: func(c *Conn, err error) { errs <- err }}
	c, _ := dial(t, serve(t, func(cx *core.Ctx) { Serve(cx, nil, ev) }))
	c.send(frame.Close, "")
	if h, p := c.next(); h.Opcode != frame.Close || len(p) != 0 {
		t.Fatalf("answer %v %q", h.Opcode, p)
	}
	c.Close() // the handshake is over: the client's side of TCP closes too
	var ce *CloseError
	if err := coretest.Receive(t, "Events.Close", errs); !errors.As(err, &ce) || ce.Code != CloseNoStatus || !ce.Remote {
		t.Fatalf("Events.Close got %v, want a CloseError with code %d", err, CloseNoStatus)
	}
}

// TestReadAfterCloseKeepsTheMessage: a whole message that waits for its reader when the
// connection closes is still read, and the error comes after it.
func TestReadAfterCloseKeepsTheMessage(t *testing.T) {
	remotes := make(chan *Remote, 1)
	o := &Options{MaxQueued: 4 << 10, PingInterval: -1}
	addr := serve(t, func(cx *core.Ctx) {
		if c, err := Accept(cx, o); err == nil {
			remotes <- c.Remote()
		}
	})
	c, _ := dial(t, addr)
	r := <-remotes
	c.send(frame.Text, "hello")
	coretest.WaitFor(t, "the message waiting for its reader", func() bool {
		ready := false
		r.do(func() { ready = r.c.ready })
		return ready
	})
	r.Send(Binary, make([]byte, 64<<10)) // past MaxQueued: the connection is dropped
	if typ, data, err := r.ReadMessage(); err != nil || typ != Text || string(data) != "hello" {
		t.Fatalf("ReadMessage = (%v, %q, %v), want the message waiting", typ, data, err)
	}
	if _, _, err := r.ReadMessage(); err == nil {
		t.Fatal("a second ReadMessage after the close: no error")
	}
}

// TestCloseWaitsForMessage: a Send in Events.Message that closes the connection (a slow
// client) leaves the message's data lent until Message returns, and Events.Close runs after
// it, not inside it.
func TestCloseWaitsForMessage(t *testing.T) {
	type result struct {
		before, after string
		nested        bool
	}
	res := make(chan result, 1)
	closed := make(chan struct{})
	var inMessage, nested bool
	big := make([]byte, 64<<10)
	ev := &Events{
		Message: func(c *Conn, typ MessageType, data []byte) {
			inMessage = true
			before := string(data)
			c.Send(Binary, big)                     // past MaxQueued: the connection closes
			b := bufpool.Get(cap(data))[:cap(data)] // what another connection would take
			for i := range b {
				b[i] = 'X'
			}
			res <- result{before, string(data), nested}
			inMessage = false
		},
		Close: func(c *Conn, err error) { nested = inMessage; close(closed) },
	}
	o := &Options{MaxQueued: 4 << 10, PingInterval: -1}
	c, _ := dial(t, serve(t, func(cx *core.Ctx) { Serve(cx, o, ev) }))
	c.write(append(c.frameBytes(frame.Text, []byte("hello "), false, false, false),
		c.frameBytes(frame.Continuation, []byte("world"), true, false, false)...))
	r := coretest.Receive(t, "Message", res)
	if r.nested {
		t.Error("Events.Close ran inside Events.Message")
	}
	if r.after != r.before {
		t.Errorf("data changed under Message: %q, then %.20q", r.before, r.after)
	}
	coretest.Receive(t, "Events.Close", closed)
}

// TestCloseTimeoutDropsASilentClient: a client that answers no close frame within
// CloseTimeout, and reads nothing, is dropped then, not held until the output queued for it
// goes (the server's WriteTimeout is off here: it would be never).
func TestCloseTimeoutDropsASilentClient(t *testing.T) {
	closed := make(chan error, 1)
	ev := &Events{
		Open: func(c *Conn) {
			c.Send(Binary, make([]byte, 8<<20))
			c.Close(CloseNormal, "bye")
		},
		Close: func(c *Conn, err error) { closed <- err },
	}
	o := &Options{CloseTimeout: 50 * time.Millisecond, PingInterval: -1, MaxQueued: 64 << 20}
	_, addr := coretest.Serve(t, func(cx *core.Ctx) { Serve(cx, o, ev) },
		core.Options{WriteTimeout: -1, WriteHighWater: 32 << 20})
	dial(t, addr) // reads nothing more
	coretest.Receive(t, "the connection's end at CloseTimeout", closed)
}
