//go:build !race && linux && !dwell_portable

package http1

import (
	"net"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"unsafe"

	"github.com/dwellhttp/dwell/core/internal/engine"
	"github.com/dwellhttp/dwell/core/internal/serve"
	"github.com/dwellhttp/dwell/internal/bufpool"
	"github.com/dwellhttp/dwell/internal/testclient"
)

// measureStallThreshold turns the stall detector off in the servers whose memory is measured.
// On a loaded machine code that waits for a CPU can outlast the threshold, and what the
// detector then takes to look into it (a goroutine profile, a note with a stack, a log line) is
// heap that no parked request holds, there or not with the scheduling. (A detector that dumped
// every goroutine's stack, 2 MB with 2,000 parked coroutines, and held it until its loop logged
// it, put the coroutine figure 1 KB per request over its budget in 2 runs of 128 under load.)
const measureStallThreshold = -1

// The parked footprint is the figure the design is built around (docs/design.md: a parked
// coroutine-style request ≤ 3.5 KB, a continuation ≤ 0.6 KB, the connection included).

// parkedFootprint parks n requests with h and returns the server-side memory (heap in use plus
// goroutine stacks) per parked request. The client connections are opened before the baseline so
// that only the server's share is counted; the listener hands them over before they send
// anything (DisableDeferAccept), so that the baseline holds them, and the server has closed
// them before it returns (see parkedHeapStack). The stall detector is off
// (measureStallThreshold).
func parkedFootprint(t *testing.T, n int, h serve.Handler, parked *atomic.Int64, req string) float64 {
	heap, stack := parkedHeapStack(t, n, h, parked, req, true)
	return heap + stack
}

// parkedHeapStack is parkedFootprint's figure in its two parts: heap and goroutine stacks. With
// told — the request's handler learns that its client has gone, which it does unless it leaves
// a body unread, since the loop reads nothing past that body meanwhile — it returns once the
// server has closed the connections, so that what the server frees then does not lower a later
// measure; a measure without it is to be the last in its process.
func parkedHeapStack(t *testing.T, n int, h serve.Handler, parked *atomic.Int64, req string, told bool) (heap, stack float64) {
	s, addr := startServer(t, h, serve.Options{DisableDeferAccept: true, StallThreshold: measureStallThreshold})
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
		if told {
			waitFor(t, "the server to close every connection", func() bool { return openConns(s) == 0 })
		}
	}()
	waitFor(t, "the server to accept every connection", func() bool { return openConns(s) == n })
	var before, after runtime.MemStats
	dropIdleBuffers(s)
	runtime.GC()
	runtime.ReadMemStats(&before)
	for _, c := range conns {
		c.Write([]byte(req))
	}
	// A handler that has begun parks before its loop does anything else.
	waitFor(t, "every request parked", func() bool { return parked.Load() == int64(n) })
	dropIdleBuffers(s)
	runtime.GC()
	runtime.ReadMemStats(&after)
	dh := int64(after.HeapInuse) - int64(before.HeapInuse)
	ds := int64(after.StackInuse) - int64(before.StackInuse)
	t.Logf("heap %+d B, stacks %+d B per parked request", dh/int64(n), ds/int64(n))
	return float64(dh) / float64(n), float64(ds) / float64(n)
}

// dropIdleBuffers empties the pools of s's loops, so that what is measured is what the requests
// hold, not the buffers their loop keeps idle for the next turns (at most a MiB a size class: see
// bufpool). Their burst differs with the poller: epoll writes each connection's responses in its
// own turn, so one output buffer serves them all in turn, while io_uring's sends hold theirs
// until they complete, so that 2,000 connections' pipelined responses take 2,000 at once and
// leave the pools full.
func dropIdleBuffers(s *serve.Server) {
	s.Mu.Lock()
	loops := s.Loops
	s.Mu.Unlock()
	for _, l := range loops {
		done := make(chan struct{})
		l.Post(func() {
			l.Pool = engine.OutPool{}
			close(done)
		})
		<-done
	}
}

func TestParkedFootprint(t *testing.T) {
	if testing.Short() {
		t.Skip("long")
	}
	if !testclient.InProcessOfItsOwn(t, "TestParkedFootprint") {
		return
	}
	const poll = "GET /messages?after=0 HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nUser-Agent: Go-http-client/1.1\r\nAccept-Encoding: gzip\r\n\r\n"
	var co, cont, chained float64
	// The connections are accepted before each baseline; what each holds (its Socket, rounded up
	// to its allocator size class) is added to get what a parked request costs in all.
	connSize := float64(bufpool.SizeClass(int(unsafe.Sizeof(serve.Socket{}))))
	t.Run("coroutine", func(t *testing.T) {
		var parked atomic.Int64
		co = parkedFootprint(t, 2000, func(c *serve.Ctx) {
			parked.Add(1)
			c.Suspend(0)
		}, &parked, poll)
	})
	// A coroutine that has served other requests first (pipelined ones run one after another in
	// the same coroutine, the loop's work between them included) must park as small.
	t.Run("coroutine after pipelined requests", func(t *testing.T) {
		var parked atomic.Int64
		chained = parkedFootprint(t, 2000, func(c *serve.Ctx) {
			if c.Path() == "/hello" {
				c.SetHeader("Content-Type", "text/plain")
				c.WriteString("Hello World")
				return
			}
			parked.Add(1)
			c.Suspend(0)
		}, &parked, strings.Repeat("GET /hello HTTP/1.1\r\nHost: h\r\n\r\n", 3)+poll)
	})
	t.Run("continuation", func(t *testing.T) {
		var parked atomic.Int64
		cont = parkedFootprint(t, 2000, func(c *serve.Ctx) {
			parked.Add(1)
			c.Detach(0, func(*serve.Ctx, error) {})
		}, &parked, poll)
	})
	// Bytes behind a parked request, or a body it has not read, cost what the head's read took
	// past the head: the connection is not read again while its handler waits, and a new
	// connection's head reads take headReadFirst bytes (conn.go: headRead). (What follows the
	// request is kept, whatever it is: the handler may hand the connection over, and its new
	// owner gets those bytes first.) What input costs is heap (a spill buffer, and its slot in
	// the loop's list of them); the coroutines' stacks are the same in all three, and the
	// runtime's stack cache, which the subtests before leave filled or not, makes their figure
	// vary more than input could, so the heap is what is compared. For the same reason the
	// whole cost of a plain parked request is the coroutine subtest's, with fresh stacks and
	// the connection: 60,000 junk bytes behind the request may add a tenth of it at most. An
	// unread body's start is held the same way: the POST's head read leaves under
	// headReadFirst bytes of it, whose spill buffer is of their size class, and the slot costs
	// a slice header (24 B), twice that at most with the list's spare capacity.
	t.Run("junk behind the request", func(t *testing.T) {
		const n = 300
		var parked atomic.Int64
		h := func(c *serve.Ctx) {
			parked.Add(1)
			c.Suspend(0)
		}
		plainHeap, plainStack := parkedHeapStack(t, n, h, &parked, poll, true)
		whole := max(co, plainHeap+plainStack) + connSize
		parked.Store(0)
		junk, _ := parkedHeapStack(t, n, h, &parked, poll+strings.Repeat("x", 60000), true)
		parked.Store(0)
		post := "POST /messages HTTP/1.1\r\nHost: h\r\nContent-Length: 60000\r\n\r\n"
		body, _ := parkedHeapStack(t, n, h, &parked, post+strings.Repeat("x", 60000), false) // the last
		t.Logf("heap per parked request: plain %.0f B (whole cost %.0f B), with 60,000 junk bytes behind %.0f B (%+.0f B), with an unread 60,000-byte body %.0f B (%+.0f B)", plainHeap, whole, junk, junk-plainHeap, body, body-plainHeap)
		if junk > plainHeap+0.1*whole {
			t.Errorf("junk behind a parked request costs %.0f B of heap, over the plain request's %.0f B and 10%% of its whole %.0f B", junk, plainHeap, whole)
		}
		if held := float64(bufpool.SizeClass(headReadFirst)) + 2*24; body > plainHeap+held {
			t.Errorf("an unread body costs %.0f B of heap, over the plain request's %.0f B and the %.0f B of a head read's spill", body, plainHeap, held)
		}
	})
	co += connSize
	cont += connSize
	chained += connSize
	t.Logf("per parked request, connection included: coroutine %.0f B, continuation %.0f B, coroutine after pipelined requests %.0f B", co, cont, chained)
	if co > 3500 || cont > 600 || chained > 3500 {
		t.Errorf("over budget: coroutine %.0f B (≤ 3500), continuation %.0f B (≤ 600), coroutine after pipelined requests %.0f B (≤ 3500)", co, cont, chained)
	}
}
