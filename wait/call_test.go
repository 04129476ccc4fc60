package wait

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/core/coretest"
)

// TestCall: fn's value and error reach the handler, and the handler is counted as working
// while fn runs.
func TestCall(t *testing.T) {
	release := make(chan struct{})
	running := make(chan struct{}, 1)
	srv, addr := coretest.Serve(t, func(c *core.Ctx) {
		n, err := Call(c, func(ctx context.Context) (int, error) {
			running <- struct{}{}
			<-release
			return 42, errors.New("and an error")
		})
		c.WriteString(strconv.Itoa(n) + " " + err.Error())
	}, core.Options{Loops: 1})
	c := dial(t, addr)
	c.get("/")
	coretest.Receive(t, "fn running", running)
	if st := srv.Stats().Total.Conns; st.Working != 1 || st.Parked != 0 {
		t.Errorf("while fn runs: %+v", st)
	}
	close(release)
	if status, body := c.response(); status != 200 || body != "42 and an error" {
		t.Fatalf("%d %q", status, body)
	}
}

// TestCallDeadline: the request's deadline ends the wait while fn, which ignores its context,
// still runs: the server answers 503 then, not when fn returns, and fn's context is cancelled.
func TestCallDeadline(t *testing.T) {
	release := make(chan struct{})
	cancelled := make(chan error, 1)
	got := make(chan error, 1)
	_, addr := coretest.Serve(t, func(c *core.Ctx) {
		c.SetTimeout(20 * time.Millisecond)
		_, err := Call(c, func(ctx context.Context) (string, error) {
			<-release
			cancelled <- ctx.Err()
			return "late", nil
		})
		got <- err
	}, core.Options{})
	c := dial(t, addr)
	c.get("/")
	if status, _ := c.response(); status != 503 {
		t.Fatalf("status %d, want 503 at the deadline", status)
	}
	if err := coretest.Receive(t, "Call's error", got); !errors.Is(err, core.ErrDeadline) {
		t.Errorf("Call returned %v, want ErrDeadline", err)
	}
	close(release) // fn ends only now, after the answer
	if err := coretest.Receive(t, "fn's context", cancelled); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("fn's context: %v", err)
	}
}

// TestCallClientGone: a client that leaves ends the wait with ErrClosed and cancels fn's
// context, which fn watches.
func TestCallClientGone(t *testing.T) {
	started := make(chan struct{}, 1)
	fnErr := make(chan error, 1)
	got := make(chan error, 1)
	_, addr := coretest.Serve(t, func(c *core.Ctx) {
		_, err := Call(c, func(ctx context.Context) (struct{}, error) {
			started <- struct{}{}
			<-ctx.Done()
			fnErr <- ctx.Err()
			return struct{}{}, ctx.Err()
		})
		got <- err
	}, core.Options{})
	c := dial(t, addr)
	c.get("/")
	coretest.Receive(t, "fn started", started)
	c.Close()
	if err := coretest.Receive(t, "Call's error", got); !errors.Is(err, core.ErrClosed) {
		t.Errorf("Call returned %v, want ErrClosed", err)
	}
	if err := coretest.Receive(t, "fn's context", fnErr); !errors.Is(err, context.Canceled) {
		t.Errorf("fn's context: %v", err)
	}
}

// TestCallLeftBehindDoesNotRun: a call still waiting for a worker when its client leaves never
// runs fn; the pool goes on with the next call.
func TestCallLeftBehindDoesNotRun(t *testing.T) {
	p := NewPool(1)
	blocking, release := make(chan struct{}, 1), make(chan struct{})
	ran := make(chan string, 3)
	got := make(chan error, 3)
	_, addr := coretest.Serve(t, func(c *core.Ctx) {
		path := c.Path()
		_, err := CallOn(p, c, func(ctx context.Context) (struct{}, error) {
			if path == "/block" {
				blocking <- struct{}{}
				<-release
			}
			ran <- path
			return struct{}{}, nil
		})
		got <- err
	}, core.Options{Loops: 1})
	a := dial(t, addr)
	a.get("/block") // the pool's one worker
	coretest.Receive(t, "the first call running", blocking)
	b := dial(t, addr)
	b.get("/left") // queued behind it
	b.Close()
	if err := coretest.Receive(t, "the call left behind", got); !errors.Is(err, core.ErrClosed) {
		t.Fatalf("the call left behind returned %v, want ErrClosed", err)
	}
	close(release)
	if path := coretest.Receive(t, "the first call's end", ran); path != "/block" {
		t.Fatalf("%s ran first", path)
	}
	c := dial(t, addr)
	c.get("/last") // queued after the one left behind, on the one worker
	if status, _ := c.response(); status != 200 {
		t.Fatalf("the next call: %d", status)
	}
	if path := coretest.Receive(t, "the next call", ran); path != "/last" {
		t.Fatalf("%s ran after the first call, not /last", path)
	}
}

// TestCallLeftBehindIsForgotten: calls given up while the pool is busy do not stay in its
// queue, so that requests that end faster than calls start (clients that leave, deadlines that
// pass) cannot make the queue grow; a call still waiting among them keeps its place and runs.
func TestCallLeftBehindIsForgotten(t *testing.T) {
	p := NewPool(1)
	blocking, release := make(chan struct{}, 1), make(chan struct{})
	ran := make(chan string, 3)
	_, addr := coretest.Serve(t, func(c *core.Ctx) {
		path := c.Path()
		if path == "/late" {
			c.SetTimeout(time.Millisecond) // given up long before the worker is free
		}
		CallOn(p, c, func(ctx context.Context) (struct{}, error) {
			if path == "/block" {
				blocking <- struct{}{}
				<-release
			}
			ran <- path
			return struct{}{}, nil
		})
	}, core.Options{Loops: 1})
	a := dial(t, addr)
	a.get("/block") // the pool's one worker
	coretest.Receive(t, "the first call running", blocking)
	b := dial(t, addr)
	b.get("/waits") // queued, and waiting for its answer throughout
	coretest.WaitFor(t, "the second call queued", func() bool { return p.workers.State().Queued == 1 })
	const late = 500
	for i := range late {
		c := dial(t, addr) // the answer at the deadline closes the connection
		c.get("/late")
		if status, _ := c.response(); status != 503 {
			t.Fatalf("late call %d: status %d, want 503 at its deadline", i, status)
		}
		c.Close()
		// The live call and at most as many given up: not one for each call ever queued.
		if q := p.workers.State().Queued; q > 2 {
			t.Fatalf("after %d calls given up, %d calls queued behind the busy worker", i+1, q)
		}
	}
	close(release)
	if status, _ := b.response(); status != 200 {
		t.Fatalf("the call that waited: status %d", status)
	}
	if status, _ := a.response(); status != 200 {
		t.Fatalf("the first call: status %d", status)
	}
	for _, want := range []string{"/block", "/waits"} {
		if path := coretest.Receive(t, "a call's run", ran); path != want {
			t.Fatalf("%s ran, want %s: no call given up may run", path, want)
		}
	}
	c := dial(t, addr)
	c.get("/after")
	if status, _ := c.response(); status != 200 {
		t.Fatalf("a call after: status %d", status)
	}
	if path := coretest.Receive(t, "the call after", ran); path != "/after" {
		t.Fatalf("%s ran, want /after", path)
	}
}

// TestCallPanicAndMisuse: a panic in fn answers 500 from the handler; fn's use of the Ctx is
// refused as in Do.
func TestCallPanicAndMisuse(t *testing.T) {
	_, addr := coretest.Serve(t, func(c *core.Ctx) {
		switch c.Path() {
		case "/panic":
			Call(c, func(context.Context) (int, error) { panic("in fn") })
		case "/ctx":
			Call(c, func(context.Context) (string, error) { return c.Header("Host"), nil })
		}
		c.WriteString("went through")
	}, core.Options{})
	for _, path := range []string{"/panic", "/ctx"} {
		c := dial(t, addr)
		c.get(path)
		if status, body := c.response(); status != 500 {
			t.Errorf("%s: %d %q, want 500", path, status, body)
		}
	}
}
