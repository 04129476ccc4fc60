package wait

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/core/coretest"
)

// TestDisconnectsFreeEverything parks requests in every kind of wait, disconnects them all, and
// checks that each wait ended with ErrClosed and that what it held went back: no waiter left
// linked, and over 10,000 disconnects neither goroutines nor live memory above where the first
// rounds left them.
func TestDisconnectsFreeEverything(t *testing.T) {
	var ev Event
	tp, warm := NewTopic[int](4), NewTopic[int](1)
	var parked, ended, wrong atomic.Int64
	end := func(err error) {
		if err != ErrClosed {
			wrong.Add(1)
		}
		ended.Add(1)
	}
	_, addr := coretest.Serve(t, func(c *core.Ctx) {
		if c.Path() == "/warm" {
			if _, _, err := warm.Next(c, warm.Last(), time.Minute); err == nil {
				c.WriteString("warm")
			}
			return
		}
		parked.Add(1)
		switch c.Path() {
		case "/event":
			end(ev.Wait(c, time.Minute))
		case "/next":
			_, _, err := tp.Next(c, tp.Last(), time.Minute)
			end(err)
		case "/sleep":
			end(Sleep(c, time.Minute))
		case "/onnext":
			tp.OnNext(c, tp.Last(), time.Minute, func(_ *core.Ctx, _ []int, _ uint64, err error) { end(err) })
		case "/after":
			After(c, time.Minute, func(_ *core.Ctx, err error) { end(err) })
		}
	}, core.Options{Loops: 2})
	paths := []string{"/event", "/next", "/sleep", "/onnext", "/after"}
	reqs := make([]string, len(paths))
	for i, p := range paths {
		reqs[i] = fmt.Sprintf("GET %s HTTP/1.1\r\nHost: h\r\n\r\n", p)
	}

	round := func(perPath int) {
		t.Helper()
		var conns []rawConns
		for _, req := range reqs {
			conns = append(conns, openRaw(t, addr, make(rawConns, 0, perPath), req))
		}
		n := int64(perPath * len(reqs))
		target := ended.Load() + n
		coretest.WaitFor(t, "all parked", func() bool {
			return ev.h.waiting() == perPath && tp.h.waiting() == 2*perPath && parked.Load() >= target
		})
		for _, fds := range conns {
			fds.close()
		}
		coretest.WaitFor(t, "all woken", func() bool { return ended.Load() == target })
		coretest.WaitFor(t, "waiters unlinked", func() bool { return ev.h.idle() && tp.h.idle() })
	}

	// Every request of a round answered in one turn: what its output holds while it is sent
	// (buffers, queues, and on io_uring each send's own record, the kernel's until it completes)
	// reaches the most a round's disconnects can hold at once, which a disconnect round, whose
	// answers go out as the closes come, reaches or not depending on how many one turn meets.
	answerAll := func(n int) {
		t.Helper()
		conns := openRaw(t, addr, make(rawConns, 0, n), "GET /warm HTTP/1.1\r\nHost: h\r\n\r\n")
		defer conns.close()
		coretest.WaitFor(t, "all parked", func() bool { return warm.h.waiting() == n })
		warm.Publish(1)
		if got := conns.readAll("warm"); got != n {
			t.Fatalf("%d of %d woken requests answered", got, n)
		}
	}

	// A first round fills the loops' pools (coroutines, Ctxs, buffers) to their bounds, as
	// answerAll does the output's, and the next two let the loops' slices (timers, ready
	// handlers, connections, inbox) reach their high-water marks: the baseline is the higher of
	// the two readings, since how full the pools are wanders. The next 10,000 disconnects must
	// leave nothing.
	const rounds, perPath = 4, 500
	answerAll(perPath * len(reqs))
	round(perPath)
	round(perPath)
	baseMem := heapBytes()
	round(perPath)
	baseG, baseMem := runtime.NumGoroutine(), max(baseMem, heapBytes())
	for r := range rounds {
		round(perPath)
		// Goroutines that serve a connection and end after it (the portable poller's) may
		// still be ending: a leak is what does not go.
		settled := func() bool { return runtime.NumGoroutine() <= baseG+2 }
		for deadline := time.Now().Add(coretest.Patience); !settled() && time.Now().Before(deadline); {
			time.Sleep(10 * time.Millisecond)
		}
		g, mem := runtime.NumGoroutine(), heapBytes()
		t.Logf("%d disconnects after the baseline; goroutines %d (base %d), live %d KiB (base %d KiB)",
			(r+1)*perPath*len(paths), g, baseG, mem>>10, baseMem>>10)
		if g > baseG+2 {
			t.Errorf("round %d: %d goroutines, %d before", r+1, g, baseG)
		}
		// The measurement wanders by up to 200 KiB; a leak of 32 bytes a disconnect would
		// cross this bound by the last round.
		if mem > baseMem+320<<10 {
			t.Errorf("round %d: live memory grew from %d to %d KiB", r+1, baseMem>>10, mem>>10)
		}
	}
	if w := wrong.Load(); w != 0 {
		t.Fatalf("%d waits ended with something other than ErrClosed", w)
	}
}

// heapBytes is the live heap after a full collection. Stacks are left out: a leaked coroutine
// shows in the goroutine count, while the stacks the runtime keeps for reuse come and go with
// the collector's timing, by hundreds of KiB.
func heapBytes() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}
