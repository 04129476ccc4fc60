//go:build !race && linux && !dwell_portable

package websocket

import (
	"io"
	"math"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/core/coretest"
)

// fixedStackStart is the GODEBUG setting under which new goroutines start with 2 KiB stacks.
const fixedStackStart = "adaptivestackstart=0"

// TestIdleFootprint holds what an idle WebSocket costs the server beside an idle keep-alive
// connection (heap in use and goroutine stacks, after a collection), as docs/operations.md
// states it: the event style's connection holds its state and nothing else (about 190 bytes
// over the keep-alive connection's 144), the sequential style's, parked in ReadMessage, its
// handler's coroutine with a 2 KiB stack and its request besides (about 3.4 KB): under 4 KiB
// with the keep-alive connection, where a stack grown to 4 KiB would take it to 5.5 KB.
func TestIdleFootprint(t *testing.T) {
	if testing.Short() {
		t.Skip("long")
	}
	if !strings.Contains(os.Getenv("GODEBUG"), fixedStackStart) {
		// Go sizes new goroutines' stacks by what its last collection found (GODEBUG
		// adaptivestackstart), which the tests before would decide: measure in a process of
		// its own, with the runtime's fixed 2 KiB start.
		cmd := exec.Command(os.Args[0], "-test.run=^TestIdleFootprint$", "-test.v")
		cmd.Env = append(os.Environ(), "GODEBUG="+strings.TrimPrefix(os.Getenv("GODEBUG")+","+fixedStackStart, ","))
		out, err := cmd.CombinedOutput()
		t.Logf("in a process of its own:\n%s", out)
		if err != nil {
			t.Fatal(err)
		}
		return
	}
	for _, tc := range []struct {
		name  string
		h     func(*atomic.Int64) core.Handler
		bound float64 // bytes per connection over an idle keep-alive connection
	}{
		{"event style", func(open *atomic.Int64) core.Handler {
			ev := &Events{
				Open:    func(*Conn) { open.Add(1) },
				Message: func(c *Conn, typ MessageType, data []byte) { c.Send(typ, data) },
			}
			return func(cx *core.Ctx) { Serve(cx, nil, ev) }
		}, 256},
		{"sequential style", func(open *atomic.Int64) core.Handler {
			return func(cx *core.Ctx) {
				c, err := Accept(cx, nil)
				if err != nil {
					return
				}
				open.Add(1)
				for {
					typ, msg, err := c.ReadMessage()
					if err != nil || c.WriteMessage(typ, msg) != nil {
						return
					}
				}
			}
		}, 4096 - 144},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// What else the process does meanwhile (the runtime's own goroutines and buffers,
			// on a loaded machine) can only add to a measure: a measure over the bound is taken
			// again, on fresh connections, up to three times, and the smallest counts.
			least := math.Inf(1)
			for range 3 {
				least = min(least, measureIdle(t, tc.name, tc.h))
				if least <= tc.bound {
					break
				}
			}
			if least > tc.bound {
				t.Errorf("an idle WebSocket of the %s costs %.0f B over an idle keep-alive connection, over %.0f B", tc.name, least, tc.bound)
			}
		})
	}
}

// measureIdle opens 1,000 WebSockets served by the handler h makes, each idle after one echo,
// and returns the heap and stack bytes each costs over an idle keep-alive connection.
func measureIdle(t *testing.T, name string, h func(*atomic.Int64) core.Handler) float64 {
	var open atomic.Int64
	upgrade := h(&open)
	const n = 1000
	conns, buf := footprintConns(t, upgrade, n)
	upgradeReq := upgradeRequest("/ws")
	hello := []byte{0x81, 0x85, 1, 2, 3, 4, 'h' ^ 1, 'e' ^ 2, 'l' ^ 3, 'l' ^ 4, 'o' ^ 1}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for _, c := range conns {
		roundTrip(t, c, buf, upgradeReq, "\r\n\r\n")
		roundTrip(t, c, buf, string(hello), "\x81\x05hello")
	}
	coretest.WaitFor(t, "every connection open", func() bool { return open.Load() == n })
	runtime.GC()
	runtime.ReadMemStats(&after)
	heap := float64(int64(after.HeapInuse)-int64(before.HeapInuse)) / n
	stack := float64(int64(after.StackInuse)-int64(before.StackInuse)) / n
	t.Logf("%s: %.0f B of heap and %.0f B of stacks per connection, over an idle keep-alive connection", name, heap, stack)
	return heap + stack
}

// roundTrip sends req on c and reads into buf until what came ends with end.
func roundTrip(t *testing.T, c net.Conn, buf []byte, req, end string) {
	t.Helper()
	if _, err := io.WriteString(c, req); err != nil {
		t.Fatal(err)
	}
	got := 0
	for !strings.HasSuffix(string(buf[:got]), end) {
		n, err := c.Read(buf[got:])
		if err != nil {
			t.Fatalf("after %.60q: %v", buf[:got], err)
		}
		got += n
	}
}

// footprintConns serves h at every path but /plain, which answers "ok", with the stall detector
// off (a loaded machine's stall reports are not the connections' memory), and returns n
// connections that have each made one plain request, and the one buffer they read with: raw
// clients, made before a measure's baseline, so that what it sees is the server's. They close
// when the test ends.
func footprintConns(t *testing.T, h core.Handler, n int) ([]net.Conn, []byte) {
	t.Helper()
	_, addr := coretest.Serve(t, func(cx *core.Ctx) {
		if cx.Path() == "/plain" {
			cx.WriteString("ok")
			return
		}
		h(cx)
	}, core.Options{StallThreshold: -1})
	conns := make([]net.Conn, n)
	buf := make([]byte, 4096)
	for i := range conns {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		conns[i] = c
		roundTrip(t, c, buf, "GET /plain HTTP/1.1\r\nHost: h\r\n\r\n", "\r\n\r\nok")
	}
	t.Cleanup(func() {
		for _, c := range conns {
			c.Close()
		}
	})
	return conns, buf
}
