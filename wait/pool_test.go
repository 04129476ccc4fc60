package wait

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/core/coretest"
)

// TestDoFullPool: with two workers, six blocking calls run two at a time while the others
// queue, and the loop answers other requests meanwhile: while both workers are blocked and four
// calls wait behind them.
func TestDoFullPool(t *testing.T) {
	p := NewPool(2)
	var running, most atomic.Int32
	release := make(chan struct{})
	_, addr := coretest.Serve(t, func(c *core.Ctx) {
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
			<-release // the blocking call
			running.Add(-1)
		})
		c.WriteString(errString(err))
	}, core.Options{Loops: 1})
	cs := make([]*client, 6)
	for i := range cs {
		cs[i] = dial(t, addr)
		cs[i].get("/slow")
	}
	queued := func() int {
		return p.workers.State().Queued
	}
	coretest.WaitFor(t, "two calls running and four queued", func() bool {
		return running.Load() == 2 && queued() == 4
	})
	for range 3 {
		if body := roundTrip(t, addr, "/quick"); body != "quick" {
			t.Fatal(body)
		}
	}
	if r, q := running.Load(), queued(); r != 2 || q != 4 {
		t.Fatalf("%d calls running and %d queued after the quick requests; all six are blocked", r, q)
	}
	close(release)
	for _, c := range cs {
		if _, body := c.response(); body != "nil" {
			t.Fatal(body)
		}
	}
	if m := most.Load(); m != 2 {
		t.Errorf("%d calls ran at once on a pool of 2", m)
	}
	coretest.WaitFor(t, "workers ended", func() bool {
		s := p.workers.State()
		return s.Busy == 0 && s.Queued == 0
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
	_, addr := coretest.Serve(t, func(c *core.Ctx) {
		finished := false
		ctx := c.Context() // cancelled once the server has seen the client leave
		err := Do(c, func() {
			close(started)
			<-ctx.Done() // the call is still running when the server learns of it
			finished = true
		})
		got <- result{err, finished}
	}, core.Options{Loops: 1})
	c := dial(t, addr)
	c.get("/")
	coretest.Receive(t, "the call to start", started)
	c.Close()
	r := coretest.Receive(t, "Do to return", got)
	if r.err != ErrClosed || !r.finished {
		t.Fatalf("Do returned %v with fn finished=%v; want ErrClosed after fn", r.err, r.finished)
	}
}

func TestDoPanicAnswers500(t *testing.T) {
	_, addr := coretest.Serve(t, func(c *core.Ctx) {
		if c.Path() == "/panic" {
			Do(c, func() { panic("boom") })
		}
		c.WriteString("fine")
	}, core.Options{Loops: 1})
	c := dial(t, addr)
	c.get("/panic")
	if status, _ := c.response(); status != 500 {
		t.Fatalf("status %d", status)
	}
	if body := roundTrip(t, addr, "/ok"); body != "fine" {
		t.Fatal(body)
	}
}

// TestDoOutsideHandler: from a function posted to the loop, which is not the request's code, Do
// is refused without running fn.
func TestDoOutsideHandler(t *testing.T) {
	p := NewPool(1)
	var ran atomic.Bool
	errc := make(chan error, 1)
	_, addr := coretest.Serve(t, func(c *core.Ctx) {
		if c.Path() == "/next" {
			c.WriteString(errString(p.Do(c, func() {})))
			return
		}
		c.Seam().Loop().Post(func() { errc <- p.Do(c, func() { ran.Store(true) }) })
		Sleep(c, 50*time.Millisecond)
		c.WriteString("ok")
	}, core.Options{Loops: 1})
	roundTrip(t, addr, "/")
	if err := coretest.Receive(t, "Do from a posted function", errc); !errors.Is(err, core.ErrOutsideRequest) {
		t.Fatalf("Do from a posted function: %v", err)
	}
	// Had the failed call been handed to the pool, its one worker would have run it before a
	// call made on the same loop after it.
	if body := roundTrip(t, addr, "/next"); body != "nil" {
		t.Fatal(body)
	}
	if ran.Load() {
		t.Fatal("fn ran for a Do that failed")
	}
}

func TestPoolSetWorkersDrainsQueue(t *testing.T) {
	p := NewPool(1)
	release := make(chan struct{})
	var done sync.WaitGroup
	_, addr := coretest.Serve(t, func(c *core.Ctx) {
		p.Do(c, func() { <-release })
		c.WriteString("ok")
		done.Done()
	}, core.Options{Loops: 1})
	done.Add(3)
	for range 3 {
		dial(t, addr).get("/")
	}
	coretest.WaitFor(t, "calls queued", func() bool {
		s := p.workers.State()
		return s.Busy == 1 && s.Queued == 2
	})
	p.SetWorkers(3)
	if running := p.workers.State().Busy; running != 3 {
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
	arrived := make(chan struct{}, 8)
	doLoop := make(chan *core.Loop, 1)
	s, addr := coretest.Serve(t, func(c *core.Ctx) {
		// A handler parks before its loop does anything else, so once it has arrived, the
		// shutdown finds it waiting.
		arrived <- struct{}{}
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
			doLoop <- c.Seam().Loop()
			got <- "do " + errString(Do(c, func() { <-release }))
		}
	}, core.Options{Loops: 2})
	paths := []string{"/sleep", "/event", "/next", "/onnext", "/after", "/do"}
	for _, p := range paths {
		dial(t, addr).get(p)
	}
	for range paths {
		coretest.Receive(t, "a request in its handler", arrived)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := s.Shutdown(ctx); err != context.DeadlineExceeded {
		t.Fatalf("Shutdown returned %v", err)
	}
	// The call in Do runs past the grace period: it ends only once the loop has been told that
	// the period is over (a post made after Shutdown's runs after it).
	if err := (<-doLoop).Post(func() { close(release) }); err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{}
	for _, p := range paths {
		want[p[1:]+" "+ErrShutdown.Error()] = true
	}
	for range paths {
		r := coretest.Receive(t, fmt.Sprintf("the rest of %v", want), got)
		if !want[r] {
			t.Errorf("unexpected %q", r)
		}
		delete(want, r)
	}
	if !ev.h.idle() || !tp.h.idle() {
		t.Fatal("waiters left linked after shutdown")
	}
}

// TestDoGoexit: runtime.Goexit in fn ends only its worker: the handler wakes with ErrGoexit,
// and the worker's place serves the next call (a pool of one would otherwise be stuck).
func TestDoGoexit(t *testing.T) {
	p := NewPool(1)
	_, addr := coretest.Serve(t, func(c *core.Ctx) {
		var err error
		if c.Path() == "/goexit" {
			err = p.Do(c, runtime.Goexit)
		} else {
			err = p.Do(c, func() {})
		}
		c.WriteString(errString(err))
	}, core.Options{Loops: 1})
	for range 3 {
		if body := roundTrip(t, addr, "/goexit"); body != ErrGoexit.Error() {
			t.Fatalf("Do with Goexit: %q", body)
		}
		if body := roundTrip(t, addr, "/"); body != "nil" {
			t.Fatalf("Do after a Goexit: %q", body)
		}
	}
}

// TestDoFunctionCannotUseCtx: fn runs on a worker, not in the request's code: its use of the
// handler's Ctx is refused, and the refusal's panic, raised again in the handler, answers 500
// rather than letting fn read the request from another goroutine.
func TestDoFunctionCannotUseCtx(t *testing.T) {
	var got atomic.Value
	_, addr := coretest.Serve(t, func(c *core.Ctx) {
		defer func() {
			got.Store(fmt.Sprint(recover()))
			c.SetStatus(500)
			c.WriteString("refused")
		}()
		Do(c, func() { c.Header("Host") })
		c.WriteString("went through")
	}, core.Options{Loops: 1})
	c := dial(t, addr)
	c.get("/")
	if status, body := c.response(); status != 500 || body != "refused" {
		t.Fatalf("%d %q", status, body)
	}
	if v, _ := got.Load().(string); !strings.Contains(v, "Ctx.Header called outside its request") {
		t.Fatalf("the handler recovered %q", v)
	}
}

// TestDoDeadline: fn runs to its end past the request's deadline, which Do then reports.
func TestDoDeadline(t *testing.T) {
	got := make(chan error, 1)
	_, addr := coretest.Serve(t, func(c *core.Ctx) {
		c.SetTimeout(time.Millisecond)
		ctx := c.Context()
		got <- Do(c, func() { <-ctx.Done() }) // returns once the deadline has cancelled it
	}, core.Options{})
	dial(t, addr).get("/")
	if err := coretest.Receive(t, "Do's error", got); !errors.Is(err, core.ErrDeadline) {
		t.Fatalf("Do returned %v, want core.ErrDeadline", err)
	}
}
