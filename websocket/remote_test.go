package websocket

import (
	"fmt"
	"strings"
	"testing"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/core/coretest"
	"github.com/dwellhttp/dwell/websocket/internal/frame"
)

// TestRemoteAndConnSides: a Conn is the loop's and a Remote the goroutines'. A goroutine calling
// a Conn's method, and the loop calling its connection's Remote, are each stopped with a panic
// that says which call and what to use instead, before anything is sent; a goroutine's Remote
// reads, writes, sends and closes.
func TestRemoteAndConnSides(t *testing.T) {
	panics := make(chan string, 8)
	caught := func(f func()) {
		defer func() { panics <- fmt.Sprint(recover()) }()
		f()
	}
	addr := serve(t, func(cx *core.Ctx) {
		c, err := Accept(cx, nil)
		if err != nil {
			return
		}
		r := c.Remote()
		if c.Remote() != r {
			t.Error("Remote: a new one at the second call")
		}
		caught(func() { r.Send(Text, []byte("from the loop")) })
		caught(func() { r.Err() })
		go func() {
			caught(func() { c.Send(Text, []byte("from a goroutine")) })
			caught(func() { c.WriteMessage(Text, []byte("from a goroutine")) })
			caught(func() { c.ReadMessage() })
			caught(func() { c.Close(CloseNormal, "") })
			typ, msg, err := r.ReadMessage()
			if err != nil {
				t.Error(err)
				return
			}
			if err := r.WriteMessage(typ, append(msg, " (written)"...)); err != nil {
				t.Error(err)
			}
			if res := r.Send(Text, []byte("sent")); res != SendQueued {
				t.Errorf("Send: %v", res)
			}
			w, _ := r.NextWriter(Binary)
			fmt.Fprint(w, "in ", "pieces")
			if err := w.Close(); err != nil {
				t.Error(err)
			}
			r.Close(CloseNormal, "done")
		}()
	})
	cl, _ := dial(t, addr)
	for _, want := range []string{"Remote.Post called on a loop", "Remote.Post called on a loop"} {
		if got := coretest.Receive(t, "a Remote's call on the loop", panics); !strings.Contains(got, want) {
			t.Errorf("a Remote's call on the loop: panicked with %q, want %q", got, want)
		}
	}
	for _, op := range []string{"Send", "WriteMessage", "ReadMessage", "Close"} {
		got := coretest.Receive(t, "a Conn's call off the loop", panics)
		if !strings.Contains(got, "websocket.Conn."+op+" called off its loop") || !strings.Contains(got, "Conn.Remote") {
			t.Errorf("Conn.%s from a goroutine: panicked with %q", op, got)
		}
	}
	cl.send(frame.Text, "hello")
	cl.expect(frame.Text, "hello (written)")
	cl.expect(frame.Text, "sent")
	cl.expect(frame.Binary, "in pieces")
	cl.expectClose(CloseNormal)
}
