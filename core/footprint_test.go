//go:build !race && linux && !dwell_portable

package core

import (
	"net"
	"runtime"
	"sync/atomic"
	"testing"
	"unsafe"

	"github.com/dwellhttp/dwell/core/internal/bufpool"
)

// The parked footprint is the figure the design is built around (docs/design.md: a parked
// coroutine-style request ≤ 3.5 KB, a continuation ≤ 0.6 KB, the connection included).

// parkedFootprint parks n requests with h and returns the server-side memory (heap in use plus
// goroutine stacks) per parked request. The client connections are opened before the baseline so
// that only the server's share is counted; the listener hands them over before they send
// anything (DisableDeferAccept), so that the baseline holds them.
func parkedFootprint(t *testing.T, n int, h Handler, parked *atomic.Int64) float64 {
	s, addr := startServer(t, h, Options{DisableDeferAccept: true})
	conns := make([]net.Conn, n)
	for i := range conns {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		conns[i] = c
	}
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	waitFor(t, "the server to accept every connection", func() bool { return openConns(s) == n })
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	req := []byte("GET /messages?after=0 HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nUser-Agent: Go-http-client/1.1\r\nAccept-Encoding: gzip\r\n\r\n")
	for _, c := range conns {
		c.Write(req)
	}
	// A handler that has begun parks before its loop does anything else.
	waitFor(t, "every request parked", func() bool { return parked.Load() == int64(n) })
	runtime.GC()
	runtime.ReadMemStats(&after)
	heap := int64(after.HeapInuse) - int64(before.HeapInuse)
	stack := int64(after.StackInuse) - int64(before.StackInuse)
	t.Logf("heap %+d B, stacks %+d B per parked request", heap/int64(n), stack/int64(n))
	return float64(heap+stack) / float64(n)
}

func TestParkedFootprint(t *testing.T) {
	if testing.Short() {
		t.Skip("long")
	}
	var co, cont float64
	t.Run("coroutine", func(t *testing.T) {
		var parked atomic.Int64
		co = parkedFootprint(t, 2000, func(c *Ctx) {
			parked.Add(1)
			c.Suspend(0)
		}, &parked)
	})
	t.Run("continuation", func(t *testing.T) {
		var parked atomic.Int64
		cont = parkedFootprint(t, 2000, func(c *Ctx) {
			parked.Add(1)
			c.Detach(0, func(*Ctx, error) {})
		}, &parked)
	})
	// The connections were accepted before the baseline; add what each holds (its conn, rounded
	// up to its allocator size class) to get what a parked request costs in all.
	conn := float64(bufpool.SizeClass(int(unsafe.Sizeof(conn{}))))
	co += conn
	cont += conn
	t.Logf("per parked request, connection included: coroutine %.0f B, continuation %.0f B", co, cont)
	if co > 3500 || cont > 600 {
		t.Errorf("over budget: coroutine %.0f B (≤ 3500), continuation %.0f B (≤ 600)", co, cont)
	}
}
