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
