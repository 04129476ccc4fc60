package websocket

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/core/coretest"
	"github.com/dwellhttp/dwell/websocket/internal/frame"
)

// groupServer serves connections that join g, over three loops, with o; joined says when
// each has.
func groupServer(t *testing.T, g *Group, o *Options, closed chan<- error) (string, <-chan struct{}) {
	joined := make(chan struct{}, 100)
	ev := &Events{
		Open: func(c *Conn) { g.Add(c); joined <- struct{}{} },
		Close: func(_ *Conn, err error) {
			if closed != nil {
				closed <- err
			}
		},
	}
	_, addr := coretest.Serve(t, func(cx *core.Ctx) { Serve(cx, o, ev) }, core.Options{Loops: 3})
	return addr, joined
}

func TestBroadcast(t *testing.T) {
	var g Group
	addr, joined := groupServer(t, &g, nil, nil)
	clients := make([]*client, 12)
	for i := range clients {
		clients[i], _ = dial(t, addr)
		coretest.Receive(t, "a join", joined)
	}
	for i := range 20 {
		g.Broadcast(NewPreparedMessage(Text, []byte(fmt.Sprint("message ", i))))
	}
	for _, c := range clients {
		for i := range 20 {
			c.expect(frame.Text, fmt.Sprint("message ", i))
		}
	}
	// A member that leaves is not sent to; the others go on.
	clients[0].send(frame.Close, closePayload(1000, ""))
	clients[0].expectClose(1000)
	g.Remove(clients[1].conn(t, &g))
	g.Broadcast(NewPreparedMessage(Binary, []byte("after")))
	for _, c := range clients[2:] {
		c.expect(frame.Binary, "after")
	}
}

// conn finds the server's side of the client c in g, by asking each member for its
// address; only for tests.
func (c *client) conn(t *testing.T, g *Group) *Conn {
	local := c.LocalAddr().String()
	g.mu.Lock()
	loops := g.loops
	g.mu.Unlock()
	for _, gl := range loops {
		found := make(chan *Conn, 1)
		gl.loop.Post(func() {
			var m *Conn
			for _, s := range gl.conns {
				if s.hc.RemoteAddr().String() == local {
					m = s
				}
			}
			found <- m
		})
		if m := coretest.Receive(t, "a member", found); m != nil {
			return m
		}
	}
	t.Fatal("no member for the client")
	return nil
}

// TestBroadcastCompressed: members that compress get the message compressed once, members
// that do not get it plain, and members with context takeover compress it themselves.
func TestBroadcastCompressed(t *testing.T) {
	var g Group
	addrPlain, joinedPlain := groupServer(t, &g, nil, nil)
	addrZ, joinedZ := groupServer(t, &g, &Options{Compress: true, ContextTakeover: true}, nil)
	plain, _ := dial(t, addrPlain)
	coretest.Receive(t, "a join", joinedPlain)
	shared, _ := dial(t, addrZ, "Sec-WebSocket-Extensions: permessage-deflate; server_no_context_takeover")
	coretest.Receive(t, "a join", joinedZ)
	own, _ := dial(t, addrZ, "Sec-WebSocket-Extensions: permessage-deflate")
	coretest.Receive(t, "a join", joinedZ)
	msg := strings.Repeat("compress me once ", 40)
	pm := NewPreparedMessage(Text, []byte(msg))
	g.Broadcast(pm)
	plain.expect(frame.Text, msg)
	for _, c := range []*client{shared, own} {
		h, p := c.next()
		if !h.RSV1 || inflateMsg(t, p, nil) != msg {
			t.Fatal("a compressing member did not get the message compressed")
		}
	}
	pm.once.Do(func() { t.Error("the shared compression was not made") })
}

// TestBroadcastSlowReader: a member that stops reading is closed by its policy once its
// queue is full, and every other member receives every message.
func TestBroadcastSlowReader(t *testing.T) {
	var g Group
	closed := make(chan error, 10)
	addr, joined := groupServer(t, &g, &Options{MaxQueued: 256 << 10}, closed)
	readers := make([]*client, 3)
	for i := range readers {
		readers[i], _ = dial(t, addr)
		coretest.Receive(t, "a join", joined)
	}
	stalled, _ := dial(t, addr)
	coretest.Receive(t, "a join", joined)
	stalled.SetReadBuffer(4 << 10)
	// The readers keep up (each message is read by all before the next is broadcast); the
	// stalled member's kernel buffers fill, then its queue.
	msg := make([]byte, 64<<10)
	for i := 0; len(closed) == 0; i++ {
		if i == 2000 { // 128 MB: far more than any kernel buffers for one connection
			t.Fatal("the stalled member was never closed")
		}
		g.Broadcast(NewPreparedMessage(Binary, msg))
		for _, c := range readers {
			if h, p := c.next(); h.Opcode != frame.Binary || len(p) != len(msg) {
				t.Fatalf("a reader got %v of %d bytes", h.Opcode, len(p))
			}
		}
	}
	var ce *CloseError
	if err := coretest.Receive(t, "the stalled member's close", closed); !errors.As(err, &ce) || ce.Code != ClosePolicyViolation {
		t.Fatalf("the stalled member closed with %v", err)
	}
	g.Broadcast(NewPreparedMessage(Text, []byte("after")))
	for _, c := range readers {
		c.expect(frame.Text, "after")
	}
}
