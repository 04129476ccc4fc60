package websocket

import (
	"fmt"
	"sync"
	"testing"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/core/coretest"
	"github.com/dwellhttp/dwell/websocket/internal/frame"
)

// TestSendAcrossLoops: the code of one loop sends to a connection of another, which sends back
// from its own loop, many times over: Send posts and never waits, so neither loop holds the
// other up (had it waited for the other loop, the two would wait for each other), and every
// message arrives, in order. Each connection's Remote, taken on its loop, is what the other
// loop's code sends with.
func TestSendAcrossLoops(t *testing.T) {
	var mu sync.Mutex
	var conns []*Conn
	remotes := map[*Conn]*Remote{}
	ev := &Events{
		Open: func(c *Conn) {
			mu.Lock()
			conns = append(conns, c)
			remotes[c] = c.Remote()
			mu.Unlock()
		},
		Message: func(c *Conn, typ MessageType, data []byte) {
			mu.Lock()
			others := append([]*Conn(nil), conns...)
			mu.Unlock()
			for _, o := range others {
				if o != c {
					mu.Lock()
					ro := remotes[o]
					mu.Unlock()
					if r := ro.Send(typ, data); r != SendQueued && r != SendBackpressure {
						t.Errorf("Send to another loop's connection: %v", r)
					}
				}
			}
		},
	}
	_, addr := coretest.Serve(t, func(cx *core.Ctx) { Serve(cx, nil, ev) }, core.Options{Loops: 2})

	// Connections go to the loops in turn, or as the kernel spreads them: open them until two
	// are on different loops, and keep those two.
	var a, b *client
	var ia, ib int
	for i := 0; b == nil; i++ {
		c, _ := dial(t, addr)
		mu.Lock()
		n := len(conns)
		mu.Unlock()
		for n <= i {
			c.send(frame.Ping, "") // the pong comes once the connection is open and in conns
			c.expect(frame.Pong, "")
			mu.Lock()
			n = len(conns)
			mu.Unlock()
		}
		mu.Lock()
		switch {
		case a == nil:
			a, ia = c, i
		case conns[i].Loop() != conns[ia].Loop():
			b, ib = c, i
		default:
			remotes[conns[i]].Close(CloseNormal, "")
		}
		mu.Unlock()
		if i > 64 {
			t.Skip("the kernel put every connection on one loop")
		}
	}
	mu.Lock()
	conns = []*Conn{conns[ia], conns[ib]} // the others are closing
	mu.Unlock()

	const n = 200
	for i := range n {
		a.send(frame.Text, fmt.Sprint("a", i))
		b.send(frame.Text, fmt.Sprint("b", i))
	}
	for i := range n {
		b.expect(frame.Text, fmt.Sprint("a", i))
		a.expect(frame.Text, fmt.Sprint("b", i))
	}
}
