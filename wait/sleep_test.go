package wait

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/core/coretest"
)

// TestSleep: Sleep ends with nil, not before its time. The time is the client's, from before it
// sent the request, which is never later than the handler's call.
func TestSleep(t *testing.T) {
	const d = 60 * time.Millisecond
	_, addr := coretest.Serve(t, func(c *core.Ctx) {
		c.WriteString(errString(Sleep(c, d)))
	}, core.Options{Loops: 1})
	start := time.Now()
	if body := roundTrip(t, addr, "/"); body != "nil" {
		t.Fatal(body)
	}
	if took := time.Since(start); took < d {
		t.Fatalf("a Sleep of %v answered after %v", d, took)
	}
}

// TestSleepParksOnlyItself: while one handler sleeps, others on the same loop are answered,
// before the sleep ends; the sleep then ends on its own account (here, its client leaving),
// not on theirs.
func TestSleepParksOnlyItself(t *testing.T) {
	asleep := make(chan struct{}, 1)
	slept := make(chan error, 1)
	_, addr := coretest.Serve(t, func(c *core.Ctx) {
		if c.Path() == "/sleep" {
			asleep <- struct{}{}
			slept <- Sleep(c, time.Minute)
			return
		}
		c.WriteString(c.Path())
	}, core.Options{Loops: 1})
	sleeper := dial(t, addr)
	sleeper.get("/sleep")
	coretest.Receive(t, "the sleeper in its handler", asleep)
	for range 20 {
		if body := roundTrip(t, addr, "/quick"); body != "/quick" {
			t.Fatal(body)
		}
	}
	select {
	case err := <-slept:
		t.Fatalf("the sleep ended (%v) before its minute, beside quick requests", err)
	default:
	}
	sleeper.Close()
	if err := coretest.Receive(t, "the sleep to end", slept); err != ErrClosed {
		t.Fatalf("Sleep returned %v", err)
	}
}

func TestSleepEndsWhenClientLeaves(t *testing.T) {
	got := make(chan error, 1)
	parked := make(chan struct{})
	_, addr := coretest.Serve(t, func(c *core.Ctx) {
		close(parked)
		got <- Sleep(c, time.Minute)
	}, core.Options{Loops: 1})
	c := dial(t, addr)
	c.get("/")
	coretest.Receive(t, "the handler", parked)
	c.Close()
	if err := coretest.Receive(t, "Sleep to end on the disconnect", got); err != ErrClosed {
		t.Fatalf("Sleep returned %v", err)
	}
}

// TestAfter: the continuation runs with nil once the time has passed (measured as in TestSleep),
// or at once for none.
func TestAfter(t *testing.T) {
	const d = 50 * time.Millisecond
	_, addr := coretest.Serve(t, func(c *core.Ctx) {
		path := strings.Clone(c.Path()) // borrowed values end when the handler returns
		wait := d
		if path == "/zero" {
			wait = 0
		}
		After(c, wait, func(c *core.Ctx, err error) {
			fmt.Fprint(c, path, " ", errString(err))
		})
	}, core.Options{Loops: 1})
	c := dial(t, addr)
	start := time.Now()
	c.get("/a")
	c.get("/zero")
	for i, want := range []string{"/a nil", "/zero nil"} {
		if _, body := c.response(); body != want {
			t.Fatalf("%q, want %q", body, want)
		}
		if took := time.Since(start); i == 0 && took < d {
			t.Fatalf("an After of %v answered after %v", d, took)
		}
	}
}

// TestAfterChained: a continuation may detach again, and the response ends with the last one.
func TestAfterChained(t *testing.T) {
	_, addr := coretest.Serve(t, func(c *core.Ctx) {
		n := 0
		var k func(*core.Ctx, error)
		k = func(c *core.Ctx, err error) {
			n++
			fmt.Fprint(c, n, errString(err), ";")
			if n < 3 {
				After(c, 5*time.Millisecond, k)
			}
		}
		After(c, 5*time.Millisecond, k)
	}, core.Options{Loops: 1})
	if body := roundTrip(t, addr, "/"); body != "1nil;2nil;3nil;" {
		t.Fatal(body)
	}
}

func TestAfterClientLeaves(t *testing.T) {
	got := make(chan error, 1)
	parked := make(chan struct{})
	_, addr := coretest.Serve(t, func(c *core.Ctx) {
		After(c, time.Minute, func(_ *core.Ctx, err error) { got <- err })
		close(parked)
	}, core.Options{Loops: 1})
	c := dial(t, addr)
	c.get("/")
	coretest.Receive(t, "the handler", parked)
	c.Close()
	if err := coretest.Receive(t, "the continuation to run on the disconnect", got); err != ErrClosed {
		t.Fatalf("continuation got %v", err)
	}
}
