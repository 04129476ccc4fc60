package websocket

import (
	"bytes"
	"errors"
	"net"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/core/coretest"
	"github.com/dwellhttp/dwell/websocket/internal/frame"
)

// TestBudgetClosesTheLargest: when a message in progress would take the messages in progress
// of all connections past their budget, the connection holding the most is closed with 1009
// and counted — not the one whose message grew last — and the others go on, their messages
// whole.
func TestBudgetClosesTheLargest(t *testing.T) {
	b := NewBudget(1 << 20)
	o := &Options{Budget: b, MaxMessage: 4 << 20}
	for _, st := range styles {
		t.Run(st.name, func(t *testing.T) {
			addr := serve(t, st.h(o))
			big, _ := dial(t, addr)
			small, _ := dial(t, addr)
			// 600 KiB of a message: a buffer of 1 MiB, the whole budget but not over it.
			big.write(big.frameBytes(frame.Binary, make([]byte, 600<<10), false, false, false))
			coretest.WaitFor(t, "the big message's buffer", func() bool { return b.Held() == 1<<20 })
			part := bytes.Repeat([]byte("s"), 100<<10)
			small.write(small.frameBytes(frame.Binary, part, false, false, false))
			big.expectClose(CloseMessageTooBig)
			small.write(small.frameBytes(frame.Continuation, []byte("end"), true, false, false))
			small.expect(frame.Binary, string(part)+"end")
			if n := b.Closed(); n != 1 {
				t.Errorf("the budget counts %d closes, want 1", n)
			}
			b.closed.Store(0)
			coretest.WaitFor(t, "nothing held", func() bool { return b.Held() == 0 })
		})
	}
}

// TestBudgetBoundsManyConnections: connections that each begin a message and stop, together
// over the budget, are closed until what the rest hold is within it; every close is counted,
// and the connections left finish their messages whole.
func TestBudgetBoundsManyConnections(t *testing.T) {
	const (
		n      = 100
		budget = 4 << 20
		part   = 200 << 10 // a buffer of 256 KiB
	)
	b := NewBudget(budget)
	var mu sync.Mutex
	ports := map[*Conn]uint16{}
	closedPorts := map[uint16]error{}
	ev := &Events{
		Open:    func(c *Conn) { mu.Lock(); ports[c] = c.RemoteAddr().Port(); mu.Unlock() },
		Message: func(c *Conn, typ MessageType, data []byte) { c.Send(typ, data) },
		Close:   func(c *Conn, err error) { mu.Lock(); closedPorts[ports[c]] = err; mu.Unlock() },
	}
	addr := serve(t, func(cx *core.Ctx) { Serve(cx, &Options{Budget: b}, ev) })
	clients := make([]*client, n)
	payload := bytes.Repeat([]byte("m"), part)
	for i := range clients {
		clients[i], _ = dial(t, addr)
		clients[i].write(clients[i].frameBytes(frame.Binary, payload, false, false, false))
	}
	coretest.WaitFor(t, "every message held or its connection closed", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return b.holding()+len(closedPorts) == n && b.Held() <= budget
	})
	held, closed := b.holding(), int(b.Closed())
	if held > budget/(256<<10) || closed != n-held {
		t.Fatalf("%d connections hold messages and %d were closed: the budget holds %d of 256 KiB", held, closed, budget/(256<<10))
	}
	// The closed ones were told 1009; the others finish their messages.
	for _, c := range clients {
		mu.Lock()
		err, gone := closedPorts[uint16(c.LocalAddr().(*net.TCPAddr).Port)]
		mu.Unlock()
		if gone {
			var ce *CloseError
			if !errors.As(err, &ce) || ce.Code != CloseMessageTooBig {
				t.Fatalf("a connection closed with %v, want a 1009", err)
			}
			c.readClose(CloseMessageTooBig)
			continue
		}
		c.write(c.frameBytes(frame.Continuation, []byte("!"), true, false, false))
		if h, p := c.next(); h.Opcode != frame.Binary || len(p) != part+1 {
			t.Fatalf("got %v of %d bytes, want the message echoed", h.Opcode, len(p))
		}
	}
}

// TestMessageTimeout: a message begun and never ended — one frame and then silence, or
// endless empty fragments — is closed with 1008 once Options.MessageTimeout has passed, even
// while the connection answers pings; a message that ends in time is not.
func TestMessageTimeout(t *testing.T) {
	o := &Options{MessageTimeout: time.Second}
	for _, st := range styles {
		t.Run(st.name, func(t *testing.T) {
			addr := serve(t, st.h(o))
			silent, _ := dial(t, addr)
			silent.write(silent.frameBytes(frame.Text, []byte("never ends"), false, false, false))
			empty, _ := dial(t, addr)
			var fragments []byte
			fragments = append(fragments, empty.frameBytes(frame.Text, nil, false, false, false)...)
			for range 10_000 {
				fragments = append(fragments, empty.frameBytes(frame.Continuation, nil, false, false, false)...)
			}
			empty.write(fragments)
			empty.send(frame.Ping, "still here")
			empty.expect(frame.Pong, "still here")
			silent.expectClose(ClosePolicyViolation)
			empty.expectClose(ClosePolicyViolation)
			ok, _ := dial(t, addr)
			ok.write(ok.frameBytes(frame.Text, []byte("in "), false, false, false))
			ok.write(ok.frameBytes(frame.Continuation, []byte("time"), true, false, false))
			ok.expect(frame.Text, "in time")
		})
	}
}

// TestConnSize: a connection is 128 bytes, an allocator size class, with room for its message
// deadline (msgSince) in what the fields leave for alignment.
func TestConnSize(t *testing.T) {
	if n := unsafe.Sizeof(Conn{}); n != 128 {
		t.Errorf("a Conn is %d bytes, want 128", n)
	}
}
