//go:build !race && linux && !dwell_portable

package websocket

import (
	"io"
	"testing"

	"github.com/dwellhttp/dwell/core"
)

// TestRemoteSendAllocs counts what a goroutine's Send costs: the copy of the message it posts,
// and the task that sends it on the loop — nothing more on either side.
func TestRemoteSendAllocs(t *testing.T) {
	remotes := make(chan *Remote, 1)
	ev := &Events{Open: func(c *Conn) { remotes <- c.Remote() }}
	addr := serve(t, func(cx *core.Ctx) { Serve(cx, nil, ev) })
	cl, _ := dial(t, addr)
	r := <-remotes
	msg := []byte("0123456789")
	in := make([]byte, 2+len(msg))
	do := func() {
		if res := r.Send(Text, msg); res != SendQueued {
			t.Fatalf("Send: %v", res)
		}
		if _, err := io.ReadFull(cl.R, in); err != nil {
			t.Fatal(err)
		}
	}
	for range 10 {
		do() // the pools fill
	}
	if n := testing.AllocsPerRun(500, do); n != 2 {
		t.Fatalf("%v allocations per Send from a goroutine, want 2", n)
	}
}
