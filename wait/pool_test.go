package wait

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dwellhttp/dwell/core"
)

// TestDoFullPool: with two workers, six slow calls run two at a time, in three waves, while the
// loop keeps answering other requests.
func TestDoFullPool(t *testing.T) {
	p := NewPool(2)
	var running, most atomic.Int32
	_, addr := startServer(t, func(c *core.Ctx) {
		if c.Path() == "/quick" {
			c.WriteString("quick")
			return
		}
		err := p.Do(c, func() {
			n := running.Add(1)
			for {
				m := most.Load()
				if n <= m || most.CompareAndSwap(m, n) {
					break
				}
			}
			time.Sleep(60 * time.Millisecond) // the blocking call
			running.Add(-1)
		})
		c.WriteString(errString(err))
	}, 1)
	start := time.Now()
	cs := make([]*client, 6)
	for i := range cs {
		cs[i] = dial(t, addr)
		cs[i].get("/slow")
	}
	time.Sleep(20 * time.Millisecond)
	q := time.Now()
	if body := roundTrip(t, addr, "/quick"); body != "quick" {
		t.Fatal(body)
	}
	if d := time.Since(q); d > 30*time.Millisecond {
		t.Errorf("a quick request beside busy workers took %v", d)
	}
	for _, c := range cs {
		if _, body := c.response(); body != "nil" {
			t.Fatal(body)
		}
	}
	if d := time.Since(start); d < 170*time.Millisecond {
		t.Errorf("six 60 ms calls on two workers took only %v", d)
	}
	if m := most.Load(); m != 2 {
		t.Errorf("%d calls ran at once on a pool of 2", m)
	}
	waitFor(t, time.Second, "workers ended", func() bool {
		p.mu.Lock()
		defer p.mu.Unlock()
		return p.running == 0 && len(p.queue) == 0
	})
}

// TestDoRunsToEndWhenClientLeaves: fn finishes before Do returns, which then reports ErrClosed.
func TestDoRunsToEndWhenClientLeaves(t *testing.T) {
	type result struct {
		err      error
		finished bool
	}
	got := make(chan result, 1)
	started := make(chan struct{})
	_, addr := startServer(t, func(c *core.Ctx) {
		finished := false
		err := Do(c, func() {
			close(started)
			time.Sleep(100 * time.Millisecond)
			finished = true
		})
		got <- result{err, finished}
	}, 1)
	c := dial(t, addr)
	c.get("/")
	<-started
	c.Close()
	r := <-got
	if r.err != ErrClosed || !r.finished {
		t.Fatalf("Do returned %v with fn finished=%v; want ErrClosed after fn", r.err, r.finished)
	}
}

func TestDoPanicAnswers500(t *testing.T) {
	_, addr := startServer(t, func(c *core.Ctx) {
		if c.Path() == "/panic" {
			Do(c, func() { panic("boom") })
		}
		c.WriteString("fine")
	}, 1)
	c := dial(t, addr)
	c.get("/panic")
	if status, _ := c.response(); status != 500 {
		t.Fatalf("status %d", status)
	}
	if body := roundTrip(t, addr, "/ok"); body != "fine" {
		t.Fatal(body)
	}
}

// TestDoOutsideHandler: from a function posted to the loop Do fails without running fn.
func TestDoOutsideHandler(t *testing.T) {
	var ran atomic.Bool
	errc := make(chan error, 1)
	_, addr := startServer(t, func(c *core.Ctx) {
		c.Loop().Post(func() { errc <- Do(c, func() { ran.Store(true) }) })
		Sleep(c, 50*time.Millisecond)
		c.WriteString("ok")
	}, 1)
	roundTrip(t, addr, "/")
	if err := <-errc; err != core.ErrNotInHandler {
		t.Fatalf("Do from a posted function: %v", err)
	}
	time.Sleep(20 * time.Millisecond)
	if ran.Load() {
		t.Fatal("fn ran for a Do that failed")
	}
}

func TestPoolSetWorkersDrainsQueue(t *testing.T) {
	p := NewPool(1)
	release := make(chan struct{})
	var done sync.WaitGroup
	_, addr := startServer(t, func(c *core.Ctx) {
		p.Do(c, func() { <-release })
		c.WriteString("ok")
		done.Done()
	}, 1)
	done.Add(3)
	for range 3 {
		dial(t, addr).get("/")
	}
	waitFor(t, 2*time.Second, "calls queued", func() bool {
		p.mu.Lock()
		defer p.mu.Unlock()
		return p.running == 1 && len(p.queue)-p.head == 2
	})
	p.SetWorkers(3)
	p.mu.Lock()
	running := p.running
	p.mu.Unlock()
	if running != 3 {
		t.Fatalf("%d workers after growing the pool to 3", running)
	}
	close(release)
	done.Wait()
}

// TestShutdownWhileParked: every kind of wait ends with ErrShutdown when a shutdown's grace
// period ends, and a call in Do first runs to its end.
func TestShutdownWhileParked(t *testing.T) {
	var ev Event
	tp := NewTopic[int](4)
	got := make(chan string, 8)
	release := make(chan struct{})
	s, addr := startServer(t, func(c *core.Ctx) {
		switch c.Path() {
		case "/sleep":
			got <- "sleep " + errString(Sleep(c, time.Minute))
		case "/event":
			got <- "event " + errString(ev.Wait(c, time.Minute))
		case "/next":
			_, _, err := tp.Next(c, 0, time.Minute)
			got <- "next " + errString(err)
		case "/onnext":
			tp.OnNext(c, 0, time.Minute, func(_ *core.Ctx, _ []int, _ uint64, err error) {
				got <- "onnext " + errString(err)
			})
		case "/after":
			After(c, time.Minute, func(_ *core.Ctx, err error) { got <- "after " + errString(err) })
		case "/do":
			got <- "do " + errString(Do(c, func() { <-release }))
		}
	}, 2)
	paths := []string{"/sleep", "/event", "/next", "/onnext", "/after", "/do"}
	for _, p := range paths {
		dial(t, addr).get(p)
	}
	waitFor(t, 2*time.Second, "parked", func() bool { return ev.h.waiting() == 1 && tp.h.waiting() == 2 })
	time.Sleep(20 * time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	go func() {
		time.Sleep(300 * time.Millisecond)
		close(release)
	}()
	s.Shutdown(ctx)
	want := map[string]bool{}
	for _, p := range paths {
		want[p[1:]+" "+ErrShutdown.Error()] = true
	}
	for range paths {
		select {
		case r := <-got:
			if !want[r] {
				t.Errorf("unexpected %q", r)
			}
			delete(want, r)
		case <-time.After(3 * time.Second):
			t.Fatalf("still waiting: %v", want)
		}
	}
	if !ev.h.idle() || !tp.h.idle() {
		t.Fatal("waiters left linked after shutdown")
	}
}

// TestDoGoexit: runtime.Goexit in fn ends only its worker: the handler wakes with ErrGoexit,
// and the worker's place serves the next call (a pool of one would otherwise be stuck).
func TestDoGoexit(t *testing.T) {
	p := NewPool(1)
	_, addr := startServer(t, func(c *core.Ctx) {
		var err error
		if c.Path() == "/goexit" {
			err = p.Do(c, runtime.Goexit)
		} else {
			err = p.Do(c, func() {})
		}
		c.WriteString(errString(err))
	}, 1)
	for range 3 {
		if body := roundTrip(t, addr, "/goexit"); body != ErrGoexit.Error() {
			t.Fatalf("Do with Goexit: %q", body)
		}
		if body := roundTrip(t, addr, "/"); body != "nil" {
			t.Fatalf("Do after a Goexit: %q", body)
		}
	}
}
