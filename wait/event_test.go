package wait

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/core/coretest"
)

// TestEventAcrossLoops parks waiters on four loops and wakes them all with one Fire from another
// goroutine; each is answered by its own loop.
func TestEventAcrossLoops(t *testing.T) {
	var ev Event
	var loops sync.Map
	_, addr := coretest.Serve(t, func(c *core.Ctx) {
		loops.Store(c.Seam().Loop(), true)
		c.WriteString(errString(ev.Wait(c, time.Minute)))
	}, core.Options{Loops: 4})
	const n = 64
	cs := make([]*client, n)
	for i := range cs {
		cs[i] = dial(t, addr)
		cs[i].get("/")
	}
	coretest.WaitFor(t, "all parked", func() bool { return ev.h.waiting() == n })
	go ev.Fire()
	for i, c := range cs {
		if _, body := c.response(); body != "nil" {
			t.Fatalf("waiter %d: %q", i, body)
		}
	}
	nloops := 0
	loops.Range(func(any, any) bool { nloops++; return true })
	if nloops < 2 {
		t.Logf("connections landed on %d loop(s) only", nloops)
	}
	coretest.WaitFor(t, "waiters unlinked", ev.h.idle)
}

// TestEventWaitBeginsAfterFire: a Fire wakes only the waits that began before it.
func TestEventWaitBeginsAfterFire(t *testing.T) {
	var ev Event
	ev.Fire() // nobody waits: nothing to remember
	_, addr := coretest.Serve(t, func(c *core.Ctx) {
		c.WriteString(errString(ev.Wait(c, 100*time.Millisecond)))
	}, core.Options{Loops: 1})
	if body := roundTrip(t, addr, "/"); body != ErrTimeout.Error() {
		t.Fatal(body)
	}
}

// TestEventTimeout: a wait nothing fires ends with ErrTimeout, not before its time (measured
// as in TestSleep), and leaves nothing linked.
func TestEventTimeout(t *testing.T) {
	const d = 80 * time.Millisecond
	var ev Event
	_, addr := coretest.Serve(t, func(c *core.Ctx) {
		c.WriteString(errString(ev.Wait(c, d)))
	}, core.Options{Loops: 1})
	start := time.Now()
	if body := roundTrip(t, addr, "/"); body != ErrTimeout.Error() {
		t.Fatal(body)
	}
	if took := time.Since(start); took < d {
		t.Fatalf("a wait of %v timed out after %v", d, took)
	}
	if !ev.h.idle() {
		t.Fatal("waiter left linked after its timeout")
	}
}

// TestEventBurstPostsOncePerLoop: fires arriving while a loop's drain is pending add no post.
// The only loop is kept busy by a handler that blocks it on purpose, so the fires all land
// before the drain can run.
func TestEventBurstPostsOncePerLoop(t *testing.T) {
	var ev Event
	blocked := make(chan struct{})
	release := make(chan struct{})
	_, addr := coretest.Serve(t, func(c *core.Ctx) {
		if c.Path() == "/block" {
			close(blocked)
			<-release // a test-only stall of the loop
			return
		}
		c.WriteString(errString(ev.Wait(c, time.Minute)))
	}, core.Options{Loops: 1})
	const n = 10
	cs := make([]*client, n)
	for i := range cs {
		cs[i] = dial(t, addr)
		cs[i].get("/wait")
	}
	coretest.WaitFor(t, "all parked", func() bool { return ev.h.waiting() == n })
	var drains atomic.Int32
	ev.h.mu.Lock()
	wl := ev.h.lists[0]
	orig := wl.drainFn
	wl.drainFn = func() { drains.Add(1); orig() }
	ev.h.mu.Unlock()

	blocker := dial(t, addr)
	blocker.get("/block")
	<-blocked
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 100 {
				ev.Fire()
			}
		})
	}
	wg.Wait()
	close(release)
	for _, c := range cs {
		if _, body := c.response(); body != "nil" {
			t.Fatal(body)
		}
	}
	if d := drains.Load(); d != 1 {
		t.Fatalf("800 fires in a burst posted %d drains, want 1", d)
	}
}

// TestEventFireRace fires from many goroutines while handlers on several loops wait, time out
// and leave; run it with -race.
func TestEventFireRace(t *testing.T) {
	var ev Event
	_, addr := coretest.Serve(t, func(c *core.Ctx) {
		for range 5 {
			if err := ev.Wait(c, 20*time.Millisecond); err != nil && err != ErrTimeout {
				c.WriteString(errString(err))
				return
			}
		}
		c.WriteString("done")
	}, core.Options{Loops: 4})
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
					ev.Fire()
					time.Sleep(time.Millisecond)
				}
			}
		})
	}
	var cwg sync.WaitGroup
	for i := range 40 {
		cwg.Go(func() {
			c := dial(t, addr)
			c.get("/")
			if i%4 == 0 {
				c.Close() // some leave while parked
				return
			}
			if _, body := c.response(); body != "done" {
				t.Errorf("%q", body)
			}
		})
	}
	cwg.Wait()
	close(stop)
	wg.Wait()
	coretest.WaitFor(t, "waiters unlinked", ev.h.idle)
}

// TestHubForgetsStoppedLoops: an Event that outlives a server drops the lists of its loops once
// another loop waits, so it does not keep the stopped server's loops reachable.
func TestHubForgetsStoppedLoops(t *testing.T) {
	var ev Event
	h := func(c *core.Ctx) { c.WriteString(errString(ev.Wait(c, 20*time.Millisecond))) }
	s, addr := coretest.Serve(t, h, core.Options{Loops: 2})
	for range 8 {
		roundTrip(t, addr, "/")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	s.Shutdown(ctx)

	_, addr2 := coretest.Serve(t, h, core.Options{Loops: 1})
	roundTrip(t, addr2, "/")
	ev.h.mu.Lock()
	n := len(ev.h.lists)
	ev.h.mu.Unlock()
	if n != 1 {
		t.Fatalf("%d waiter lists, want only the new loop's", n)
	}
}
