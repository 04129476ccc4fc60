//go:build !race && linux && !dwell_portable

package websocket

import (
	"io"
	"testing"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/websocket/internal/frame"
)

// TestEchoAllocs: an echoed message costs the server no allocation, in the event style and in
// the sequential style with NextReader and WriteMessage.
func TestEchoAllocs(t *testing.T) {
	seqEcho := func(cx *core.Ctx) {
		c, err := Accept(cx, nil)
		if err != nil {
			return
		}
		buf := make([]byte, 2048)
		for {
			typ, r, err := c.NextReader()
			if err != nil {
				return
			}
			n, _ := io.ReadFull(r, buf)
			if c.WriteMessage(typ, buf[:n]) != nil {
				return
			}
		}
	}
	for _, tc := range []struct {
		name string
		h    core.Handler
	}{{"event", echoServe(nil)}, {"sequential", seqEcho}} {
		t.Run(tc.name, func(t *testing.T) {
			c, _ := dial(t, serve(t, tc.h))
			out := c.frameBytes(frame.Binary, make([]byte, 1024), true, false, false)
			in := make([]byte, 4+1024)
			do := func() {
				if _, err := c.TCPConn.Write(out); err != nil {
					t.Fatal(err)
				}
				if _, err := io.ReadFull(c.R, in); err != nil {
					t.Fatal(err)
				}
			}
			do()
			if n := testing.AllocsPerRun(500, do); n != 0 {
				t.Fatalf("%v allocations per echoed message", n)
			}
		})
	}
}
