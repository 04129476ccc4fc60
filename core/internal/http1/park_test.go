package http1

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dwellhttp/dwell/core/internal/serve"
)

func TestSuspendResumeFromOtherGoroutine(t *testing.T) {
	_, addr := startServer(t, func(c *serve.Ctx) {
		w := c.Waker()
		// A posted function runs on the loop once the handler has given it back, that is once
		// it has parked: the wake comes from another goroutine to a handler already parked.
		c.Seam().Loop().Post(func() { go w.Wake(errors.New("woken")) })
		err := c.Suspend(0)
		c.WriteString(err.Error())
	}, serve.Options{})
	c := dial(t, addr)
	c.Send("GET / HTTP/1.1\r\nHost: h\r\n\r\n")
	if _, body := c.Response("GET"); body != "woken" {
		t.Fatal(body)
	}
}

// TestParkedHandlerParksOnlyItself: while one handler is parked, others on the same loop answer.
func TestParkedHandlerParksOnlyItself(t *testing.T) {
	release := make(chan serve.Waker, 1)
	_, addr := startServer(t, func(c *serve.Ctx) {
		if c.Path() == "/park" {
			release <- c.Waker()
			c.Suspend(0)
		}
		c.WriteString(c.Path())
	}, serve.Options{})
	parked := dial(t, addr)
	parked.Send("GET /park HTTP/1.1\r\nHost: h\r\n\r\n")
	w := <-release
	for i := range 20 {
		c := dial(t, addr)
		c.Send("GET /other HTTP/1.1\r\nHost: h\r\n\r\n")
		if _, body := c.Response("GET"); body != "/other" {
			t.Fatalf("request %d: %q", i, body)
		}
	}
	w.Wake(nil)
	if _, body := parked.Response("GET"); body != "/park" {
		t.Fatal(body)
	}
}

// TestSuspendTimeout: a Suspend with a timeout ends with ErrTimeout, and not before its time
// counted from the call, however long the loop's turn ran before the handler: here the handler
// first holds the loop (a handler must not, which makes the turn long), and a timer armed from
// the clock read at the start of the turn would be due at the next turn.
func TestSuspendTimeout(t *testing.T) {
	const d = 100 * time.Millisecond
	_, addr := startServer(t, func(c *serve.Ctx) {
		time.Sleep(d)
		c.Seam().Loop().Post(func() {}) // a turn soon after the park, with the clock read afresh
		start := time.Now()
		err := c.Suspend(d)
		c.WriteString(fmt.Sprint(err, " ", time.Since(start) >= d))
	}, serve.Options{})
	c := dial(t, addr)
	c.Send("GET / HTTP/1.1\r\nHost: h\r\n\r\n")
	if _, body := c.Response("GET"); body != serve.ErrTimeout.Error()+" true" {
		t.Fatalf("a Suspend of %v, after a turn of as long: %q", d, body)
	}
}

// TestStaleWakerIgnored: a Waker taken for a park that timed out must not wake a later one.
func TestStaleWakerIgnored(t *testing.T) {
	_, addr := startServer(t, func(c *serve.Ctx) {
		w := c.Waker()
		c.Suspend(10 * time.Millisecond)
		w.Wake(errors.New("stale"))
		err := c.Suspend(100 * time.Millisecond)
		c.WriteString(fmt.Sprint(err))
	}, serve.Options{})
	c := dial(t, addr)
	c.Send("GET / HTTP/1.1\r\nHost: h\r\n\r\n")
	if _, body := c.Response("GET"); body != serve.ErrTimeout.Error() {
		t.Fatal(body)
	}
}

// TestSuspendOutsideHandler: a function posted to the loop is not the request's code: its
// Suspend of the handler's Ctx is refused.
func TestSuspendOutsideHandler(t *testing.T) {
	errc := make(chan error, 1)
	_, addr := startServer(t, func(c *serve.Ctx) {
		c.Seam().Loop().Post(func() { errc <- c.Suspend(0) })
		c.Suspend(50 * time.Millisecond)
		c.WriteString("ok")
	}, serve.Options{})
	c := dial(t, addr)
	c.Send("GET / HTTP/1.1\r\nHost: h\r\n\r\n")
	c.Response("GET")
	if err := <-errc; !errors.Is(err, serve.ErrOutsideRequest) {
		t.Fatalf("Suspend from a posted function: %v, want ErrOutsideRequest", err)
	}
}

// TestParkRefusedInContinuation: the calls that park, made by the request's own continuation,
// which cannot park, are refused with ErrOutsideRequest naming the call — a refusal that is
// not counted as a misuse — and a body read so refused is not the body's sticky error.
func TestParkRefusedInContinuation(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "f")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	f.WriteString("file")
	srv, addr := startServer(t, func(c *serve.Ctx) {
		c.Detach(time.Millisecond, func(c *serve.Ctx, _ error) {
			var b strings.Builder
			_, rerr := c.ReadBody(make([]byte, 8))
			for _, err := range []error{c.Suspend(0), c.Seam().Hold(), c.Seam().WaitBody(), rerr, c.SendFile(f, 0, 4)} {
				fmt.Fprintf(&b, "%v %q\n", errors.Is(err, serve.ErrOutsideRequest), err)
			}
			fmt.Fprintf(&b, "body error %v", c.BodyErr())
			c.WriteString(b.String())
		})
	}, serve.Options{})
	c := dial(t, addr)
	c.Send("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\n") // the body never comes
	_, body := c.Response("POST")
	lines := strings.Split(body, "\n")
	for i, call := range []string{"Ctx.Suspend", "Ctx.Seam().Hold", "Ctx.Seam().WaitBody", "Ctx.ReadBody", "Ctx.SendFile"} {
		if i >= len(lines) || !strings.HasPrefix(lines[i], "true ") || !strings.Contains(lines[i], call+" parks") ||
			!strings.Contains(lines[i], "outside the handler's coroutine") {
			t.Errorf("%s from a continuation: %q, want ErrOutsideRequest naming it", call, lines[min(i, len(lines)-1)])
		}
	}
	if last := lines[len(lines)-1]; last != "body error <nil>" {
		t.Errorf("a body read refused in a continuation left %q", last)
	}
	if n := srv.Misuses.Load(); n != 0 {
		t.Errorf("%d misuses counted, want none: the request's own continuation made the calls", n)
	}
}

func TestPanicAnswers500AndLoopGoesOn(t *testing.T) {
	logs := &logBuffer{}
	_, addr := startServer(t, func(c *serve.Ctx) {
		if c.Path() == "/panic" {
			panic("boom")
		}
		c.WriteString("fine")
	}, serve.Options{Logger: newTestLogger(logs)})
	for range 3 {
		c := dial(t, addr)
		c.Send("GET /panic HTTP/1.1\r\nHost: h\r\n\r\n")
		resp, _ := c.Response("GET")
		if resp.StatusCode != 500 {
			t.Fatalf("status %d", resp.StatusCode)
		}
		c2 := dial(t, addr)
		c2.Send("GET /ok HTTP/1.1\r\nHost: h\r\n\r\n")
		if _, body := c2.Response("GET"); body != "fine" {
			t.Fatal(body)
		}
	}
	if !strings.Contains(logs.String(), "boom") {
		t.Fatal("panic not logged")
	}
}

// TestPanicAfterParkAndStream: a panic after the head went out closes the connection.
func TestPanicAfterResponseStarted(t *testing.T) {
	_, addr := startServer(t, func(c *serve.Ctx) {
		c.WriteString("partial")
		c.Flush()
		c.Suspend(time.Millisecond)
		panic("late")
	}, serve.Options{})
	c := dial(t, addr)
	c.Send("GET / HTTP/1.1\r\nHost: h\r\n\r\n")
	resp, err := readResponseErr(c)
	if err == nil && resp != "partial" {
		t.Fatalf("body %q", resp)
	}
	c.ExpectEOF()
}

func readResponseErr(c *rawConn) (string, error) {
	resp, err := readResp(c)
	if err != nil {
		return "", err
	}
	return resp, nil
}

func TestDisconnectWhileParked(t *testing.T) {
	got := make(chan error, 1)
	parked := make(chan context.Context, 1)
	_, addr := startServer(t, func(c *serve.Ctx) {
		parked <- c.Context()
		got <- c.Suspend(0)
	}, serve.Options{})
	c := dial(t, addr)
	c.Send("GET / HTTP/1.1\r\nHost: h\r\n\r\n")
	ctx := receive(t, "the handler", parked)
	c.Close()
	expectErr(t, got, serve.ErrClosed, "parked handler not woken by the disconnect")
	receive(t, "the request's context cancelled", ctx.Done())
}

func TestShutdownWhileParked(t *testing.T) {
	got := make(chan error, 1)
	parked := make(chan struct{})
	s, addr := startServer(t, func(c *serve.Ctx) {
		close(parked)
		got <- c.Suspend(0)
	}, serve.Options{})
	c := dial(t, addr)
	c.Send("GET / HTTP/1.1\r\nHost: h\r\n\r\n")
	<-parked
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if err := s.Shutdown(ctx); err != context.DeadlineExceeded {
		t.Fatalf("Shutdown: %v", err)
	}
	if err := <-got; err != serve.ErrShutdown {
		t.Fatalf("Suspend returned %v", err)
	}
	if resp, _ := c.Response("GET"); resp.StatusCode != 503 || !resp.Close {
		t.Fatalf("status %d close %v, want 503 and close", resp.StatusCode, resp.Close)
	}
	c.ExpectEOF()
}

// TestShutdownGraceful: a handler that finishes within the grace period answers in full; idle
// connections close at once; new connections are refused.
func TestShutdownGraceful(t *testing.T) {
	parked := make(chan serve.Waker, 1)
	s, addr := startServer(t, func(c *serve.Ctx) {
		if c.Path() == "/slow" {
			parked <- c.Waker()
			c.Suspend(0)
		}
		c.WriteString("done " + c.Path())
	}, serve.Options{Loops: 1}) // one loop: the idle connection's close says the shutdown reached the busy one's
	idle := dial(t, addr)
	idle.Send("GET /x HTTP/1.1\r\nHost: h\r\n\r\n")
	idle.Response("GET")
	busy := dial(t, addr)
	busy.Send("GET /slow HTTP/1.1\r\nHost: h\r\n\r\n")
	w := <-parked
	done := make(chan error, 1)
	go func() { done <- s.Shutdown(context.Background()) }()
	idle.ExpectEOF()
	w.Wake(nil)
	resp, body := busy.Response("GET")
	if body != "done /slow" || !resp.Close {
		t.Fatalf("%q close=%v", body, resp.Close)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func TestDetachContinuation(t *testing.T) {
	_, addr := startServer(t, func(c *serve.Ctx) {
		path := strings.Clone(c.Path())
		c.Detach(20*time.Millisecond, func(c *serve.Ctx, err error) {
			c.WriteString(fmt.Sprintf("%s after %v", path, err))
		})
	}, serve.Options{})
	c := dial(t, addr)
	c.Send("GET /a HTTP/1.1\r\nHost: h\r\n\r\nGET /b HTTP/1.1\r\nHost: h\r\n\r\n")
	for _, want := range []string{"/a after dwell: timeout", "/b after dwell: timeout"} {
		if _, body := c.Response("GET"); body != want {
			t.Fatalf("%q, want %q", body, want)
		}
	}
}

func TestDetachResumedAndDisconnected(t *testing.T) {
	got := make(chan error, 2)
	hung := make(chan struct{}, 1)
	_, addr := startServer(t, func(c *serve.Ctx) {
		if c.Path() == "/resume" {
			w := c.Waker()
			c.Detach(0, func(c *serve.Ctx, err error) { c.WriteString("resumed") })
			go w.Wake(nil)
			return
		}
		hung <- struct{}{}
		c.Detach(0, func(_ *serve.Ctx, err error) { got <- err })
	}, serve.Options{})
	c := dial(t, addr)
	c.Send("GET /resume HTTP/1.1\r\nHost: h\r\n\r\n")
	if _, body := c.Response("GET"); body != "resumed" {
		t.Fatal(body)
	}
	c.Send("GET /hang HTTP/1.1\r\nHost: h\r\n\r\n")
	// The loop sees nothing else while a handler runs: once this one has begun, the disconnect
	// finds it detached.
	receive(t, "the handler of /hang", hung)
	c.Close()
	expectErr(t, got, serve.ErrClosed, "continuation not told of the disconnect")
}

// TestHoldWaitsThroughDisconnect: Hold ends only by a wake, then reports the disconnect.
func TestHoldWaitsThroughDisconnect(t *testing.T) {
	got := make(chan error, 1)
	type held struct {
		w   serve.Waker
		ctx context.Context
	}
	holds := make(chan held, 1)
	_, addr := startServer(t, func(c *serve.Ctx) {
		if c.Path() == "/other" {
			c.WriteString("other")
			return
		}
		holds <- held{c.Waker(), c.Context()}
		got <- c.Seam().Hold()
	}, serve.Options{})
	c := dial(t, addr)
	c.Send("GET / HTTP/1.1\r\nHost: h\r\n\r\n")
	h := receive(t, "the handler", holds)
	c.Close()
	// The server has seen the disconnect once it cancels the request's context; a handler it
	// woke for that would have been resumed later in the same turn of its loop (the only one),
	// before the loop accepts a connection made after it and answers a request on it.
	receive(t, "the request's context cancelled", h.ctx.Done())
	other := dial(t, addr)
	other.Send("GET /other HTTP/1.1\r\nHost: h\r\n\r\n")
	if _, body := other.Response("GET"); body != "other" {
		t.Fatal(body)
	}
	select {
	case err := <-got:
		t.Fatalf("Hold ended by the disconnect: %v", err)
	default:
	}
	h.w.Wake(nil)
	expectErr(t, got, serve.ErrClosed, "Hold not ended by its wake")
}

// TestDisconnectsFreeParked parks many handlers, disconnects them all, and checks that what they
// held is released: every handler wakes, and the coroutines go back to a bounded pool, so a
// second round leaves no more goroutines than the first.
func TestDisconnectsFreeParked(t *testing.T) {
	var mu sync.Mutex
	started, woke := 0, 0
	_, addr := startServer(t, func(c *serve.Ctx) {
		mu.Lock()
		started++
		mu.Unlock()
		c.Suspend(0)
		mu.Lock()
		woke++
		mu.Unlock()
	}, serve.Options{Loops: 1}) // one pool: a second round finds it as the first left it
	count := func(p *int, want int) func() bool {
		return func() bool {
			mu.Lock()
			defer mu.Unlock()
			return *p == want
		}
	}
	base := runtime.NumGoroutine()
	const n = 300
	var first int
	for round := range 2 {
		conns := make([]*rawConn, n)
		for i := range conns {
			conns[i] = dial(t, addr)
			conns[i].Send("GET / HTTP/1.1\r\nHost: h\r\n\r\n")
		}
		// A handler that has begun parks before its loop can see anything else.
		waitFor(t, "every handler parked", count(&started, n*(round+1)))
		for _, c := range conns {
			c.Close()
		}
		waitFor(t, "every handler woken", count(&woke, n*(round+1)))
		// Goroutines that served a connection and end after it (the portable poller's) may
		// still be ending: a leak is what does not go.
		if round == 0 {
			waitFor(t, "the coroutines back in their pool", func() bool {
				return runtime.NumGoroutine() <= base+serve.CoroPoolMax+4
			})
			first = runtime.NumGoroutine()
		} else {
			waitFor(t, fmt.Sprintf("goroutines back to the first round's %d", first), func() bool {
				return runtime.NumGoroutine() <= first
			})
		}
	}
}

// TestShutdownEndsCoroutines checks that a stopped server leaves no goroutine behind: the
// coroutines idle in its pool end with it.
func TestShutdownEndsCoroutines(t *testing.T) {
	base := runtime.NumGoroutine()
	s := newServer(func(c *serve.Ctx) {
		c.Suspend(50 * time.Millisecond) // overlap the requests, so that the pool fills
		c.WriteString("ok")
	}, serve.Options{Addr: "127.0.0.1:0"})
	if err := s.Listen(); err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() { errc <- s.ListenAndServe() }()
	const n = 40
	conns := make([]*rawConn, n)
	for i := range conns {
		conns[i] = dial(t, s.Addr().String())
		conns[i].Send("GET / HTTP/1.1\r\nHost: h\r\n\r\n")
	}
	for _, c := range conns {
		if resp, body := c.Response("GET"); resp.StatusCode != 200 || body != "ok" {
			t.Fatalf("got %d %q", resp.StatusCode, body)
		}
		c.Close()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-errc; err != serve.ErrServerClosed {
		t.Fatalf("ListenAndServe returned %v", err)
	}
	waitFor(t, "the server's goroutines ended", func() bool { return runtime.NumGoroutine() <= base })
}

// expectErr waits for the error a handler or continuation sends on got, and fails the test with
// what when none has come after patience, or when it is not want.
func expectErr(t *testing.T, got <-chan error, want error, what string) {
	t.Helper()
	select {
	case err := <-got:
		if err != want {
			t.Fatalf("got %v, want %v", err, want)
		}
	case <-time.After(patience):
		t.Fatal(what)
	}
}

// waitFor polls cond until it holds, failing the test, with what, when it does not after
// patience.
func TestAfterFunc(t *testing.T) {
	_, addr := startServer(t, func(c *serve.Ctx) {
		w := c.Waker()
		fired := false
		stopped := c.Seam().Loop().AfterFunc(time.Hour, func() { panic("stopped timer fired") })
		c.Seam().Loop().AfterFunc(10*time.Millisecond, func() { fired = true; w.Wake(nil) })
		c.Suspend(0)
		c.WriteString(fmt.Sprint(fired, stopped.Stop()))
	}, serve.Options{})
	c := dial(t, addr)
	c.Send("GET / HTTP/1.1\r\nHost: h\r\n\r\n")
	if _, body := c.Response("GET"); body != "true true" {
		t.Fatal(body)
	}
}

func TestDetachTimeout(t *testing.T) {
	gone := make(chan error, 1)
	leaving := make(chan struct{}, 1)
	const d = 30 * time.Millisecond
	_, addr := startServer(t, func(c *serve.Ctx) {
		if c.Path() == "/leave" {
			leaving <- struct{}{}
			c.Seam().DetachFor(time.Hour, func(_ *serve.Ctx, err error) { gone <- err })
			return
		}
		c.Seam().DetachFor(d, func(c *serve.Ctx, err error) { c.WriteString(fmt.Sprint(err)) })
	}, serve.Options{})
	c := dial(t, addr)
	start := time.Now() // as in TestSuspendTimeout
	c.Send("GET / HTTP/1.1\r\nHost: h\r\n\r\n")
	if _, body := c.Response("GET"); body != "<nil>" {
		t.Fatal(body)
	}
	if took := time.Since(start); took < d {
		t.Fatalf("a detach until %v later answered after %v", d, took)
	}
	c.Send("GET /leave HTTP/1.1\r\nHost: h\r\n\r\n")
	receive(t, "the handler of /leave", leaving) // the disconnect then finds it detached
	c.Close()
	expectErr(t, gone, serve.ErrClosed, "continuation not told of the disconnect")
}

// TestLoopWake: the loop-side wake ends a park at once from code of the request's loop (a Post
// callback here), and is refused off the loop and with another loop's Waker.
func TestLoopWake(t *testing.T) {
	wakers := make(chan serve.Waker, 1)
	loops := make(chan *serve.Loop, 1)
	result := make(chan error, 1)
	_, addr := startServer(t, func(c *serve.Ctx) {
		wakers <- c.Waker()
		loops <- c.Seam().Loop()
		result <- c.Suspend(0)
	}, serve.Options{Loops: 1})
	c := dial(t, addr)
	c.Send("GET / HTTP/1.1\r\nHost: h\r\n\r\n")
	w, l := receive(t, "the park", wakers), receive(t, "the loop", loops)
	if v := panicValue(func() { l.Wake(w, nil) }); !strings.Contains(fmt.Sprint(v), "Loop.Wake called off its loop") {
		t.Errorf("Loop.Wake off the loop: panicked with %v", v)
	}
	var other serve.Loop
	if v := panicValue(func() { other.Wake(w, nil) }); !strings.Contains(fmt.Sprint(v), "another loop's request") {
		t.Errorf("Loop.Wake with another loop's Waker: panicked with %v", v)
	}
	mine := errors.New("the callback's wake")
	if err := l.Post(func() { l.Wake(w, mine) }); err != nil {
		t.Fatal(err)
	}
	if err := receive(t, "the park's end", result); err != mine {
		t.Errorf("the park ended with %v, want the callback's wake", err)
	}
	c.Response("GET")
}

// panicValue calls f and returns what it panicked with (nil if it returned).
func panicValue(f func()) (v any) {
	defer func() { v = recover() }()
	f()
	return nil
}
