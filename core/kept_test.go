package core_test

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/core/coretest"
	"github.com/dwellhttp/dwell/router"
)

// A Ctx kept past its request, as the net/http habit has it (a goroutine that logs, a late
// metrics write, a client library's callback), must never reach the request that reuses it.
// These tests use only the public API: a router, a handler that hands its Ctx to another
// goroutine, and a victim request served next by the same Ctx (one loop, whose pool gives the
// last Ctx back first).

// keptCall is one use of a kept Ctx: it returns what refused it (the error, or what it
// panicked with).
type keptCall struct {
	name string
	call func(c *core.Ctx, w core.Waker) error
}

var keptCalls = []keptCall{
	{"SetHeader", func(c *core.Ctx, _ core.Waker) error {
		return panicked(func() { c.SetHeader("X-Leaked", "yes") })
	}},
	{"AddHeader", func(c *core.Ctx, _ core.Waker) error {
		return panicked(func() { c.AddHeader("Set-Cookie", "session=stolen") })
	}},
	{"WriteString", func(c *core.Ctx, _ core.Waker) error {
		_, err := c.WriteString("LEAK ")
		return err
	}},
	{"Write", func(c *core.Ctx, _ core.Waker) error {
		_, err := c.Write([]byte("LEAK "))
		return err
	}},
	{"SetStatus", func(c *core.Ctx, _ core.Waker) error {
		return panicked(func() { c.SetStatus(418) })
	}},
	{"Header", func(c *core.Ctx, _ core.Waker) error {
		return panicked(func() {
			if v := c.Header("X-Secret"); v != "" {
				panic("the kept Ctx read the victim's header: " + v)
			}
		})
	}},
	{"Path", func(c *core.Ctx, _ core.Waker) error { return panicked(func() { _ = c.Path() }) }},
	{"Flush", func(c *core.Ctx, _ core.Waker) error { return c.Flush() }},
	{"Detach", func(c *core.Ctx, _ core.Waker) error {
		return panicked(func() { c.Detach(0, func(c *core.Ctx, _ error) { c.WriteString("LEAK ") }) })
	}},
	{"Waker", func(c *core.Ctx, _ core.Waker) error {
		return panicked(func() { c.Waker().Wake(errLeaked) })
	}},
	{"Context", func(c *core.Ctx, _ core.Waker) error { return panicked(func() { c.Context() }) }},
	{"SetValue", func(c *core.Ctx, _ core.Waker) error { return panicked(func() { c.SetValue(1, 2) }) }},
	{"ReadBody", func(c *core.Ctx, _ core.Waker) error {
		_, err := c.ReadBody(make([]byte, 8))
		return err
	}},
	// A Waker taken while the request lasted names one park of that request: once the request
	// is over it does nothing — not an error, but no effect on the victim's park either.
	{"a Waker taken before", func(c *core.Ctx, w core.Waker) error {
		w.Wake(errLeaked)
		return core.ErrOutsideRequest
	}},
}

var errLeaked = errors.New("woken by the kept Ctx")

// panicked runs f and returns the error it panicked with, or an error saying it did not.
func panicked(f func()) (err error) {
	defer func() {
		switch v := recover().(type) {
		case nil:
			err = errors.New("the call went through")
		case error:
			err = v
		default:
			err = fmt.Errorf("panicked with %v", v)
		}
	}()
	f()
	return nil
}

// TestKeptCtxIsInert: after a request ended, each call through its kept Ctx fails (with
// ErrOutsideRequest, returned or panicked with) while the Ctx serves the victim's request —
// parked at that moment, or running — and the victim's response is the one its handler made.
// The first refusal is logged, once, with the stack of the code that made it.
func TestKeptCtxIsInert(t *testing.T) {
	for _, parked := range []bool{true, false} {
		t.Run(map[bool]string{true: "victim parked", false: "victim running"}[parked], func(t *testing.T) {
			var logs coretest.LogBuffer
			var kept struct {
				c *core.Ctx
				w core.Waker
			}
			type victim struct {
				same bool
				wake core.Waker
			}
			victims := make(chan victim, 1)
			var called atomic.Bool // the kept Ctx's call is over: a running victim goes on
			r := router.New()
			r.GET("/leak", func(c *core.Ctx) {
				kept.c, kept.w = c, c.Waker()
				c.WriteString("ok\n")
			})
			r.GET("/victim", func(c *core.Ctx) {
				v := victim{same: c == kept.c, wake: c.Waker()}
				if !parked {
					victims <- v
					for !called.Load() {
						// The victim's handler runs all along the kept Ctx's call.
					}
					c.WriteString("victim\n")
					return
				}
				// Told from the loop once the handler has parked.
				c.Seam().Loop().Post(func() { victims <- v })
				err := c.Suspend(0)
				c.WriteString(fmt.Sprintf("victim %v\n", err))
			})
			_, addr := coretest.Serve(t, r.Handler(), core.Options{
				Logger: slog.New(slog.NewTextHandler(&logs, nil)),
				Loops:  1, // the victim's request gets the Ctx the leak's left to its loop's pool
			})
			for _, tc := range keptCalls {
				called.Store(false)
				conn := coretest.Dial(t, addr)
				conn.Send("GET /leak HTTP/1.1\r\nHost: h\r\n\r\n")
				if resp, body := conn.Response("GET"); resp.StatusCode != 200 || body != "ok\n" {
					t.Fatalf("/leak: %d %q", resp.StatusCode, body)
				}
				// The /leak request is over: its Ctx is back in the pool, and serves the next.
				conn.Send("GET /victim HTTP/1.1\r\nHost: h\r\nX-Secret: s3cr3t\r\n\r\n")
				v := coretest.Receive(t, "the victim's handler", victims)
				if !v.same {
					t.Fatalf("%s: the victim got another Ctx than /leak's: the test proves nothing", tc.name)
				}
				err := tc.call(kept.c, kept.w)
				called.Store(true)
				if !errors.Is(err, core.ErrOutsideRequest) {
					t.Errorf("%s through the kept Ctx: %v, want ErrOutsideRequest", tc.name, err)
				}
				if parked {
					v.wake.Wake(nil)
				}
				resp, body := conn.Response("GET")
				want := "victim <nil>\n"
				if !parked {
					want = "victim\n"
				}
				if resp.StatusCode != 200 || body != want || resp.Header.Get("X-Leaked") != "" ||
					resp.Header.Get("Set-Cookie") != "" {
					t.Errorf("%s: the victim got %d %v %q, want 200 and %q alone", tc.name,
						resp.StatusCode, resp.Header, body, want)
				}
			}
			out := logs.String()
			if n := strings.Count(out, "Ctx used outside its request"); n != 1 {
				t.Errorf("%d log lines about the misuse, want 1:\n%s", n, out)
			}
			if !strings.Contains(out, "TestKeptCtxIsInert") {
				t.Errorf("the log line does not show where the kept Ctx was used:\n%s", out)
			}
		})
	}
}

// TestGoroutineStartedByHandler is the finding as a user writes it: the handler starts a
// goroutine that writes through the Ctx once the handler has returned, while the next request
// on the Ctx waits. The goroutine's writes fail; the next client's response is its own.
func TestGoroutineStartedByHandler(t *testing.T) {
	errs := make(chan error, 2)
	release := make(chan struct{})
	victimParked := make(chan core.Waker, 1)
	r := router.New()
	r.GET("/leak", func(c *core.Ctx) {
		go func() {
			<-release
			errs <- panicked(func() { c.SetHeader("X-Leaked", "yes") })
			_, err := c.WriteString("LEAK ")
			errs <- err
		}()
		c.WriteString("ok\n")
	})
	r.GET("/victim", func(c *core.Ctx) {
		w := c.Waker()
		c.Seam().Loop().Post(func() { victimParked <- w }) // once the handler has parked
		c.Suspend(0)
		c.WriteString("victim\n")
	})
	_, addr := coretest.Serve(t, r.Handler(), core.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	conn := coretest.Dial(t, addr)
	conn.Send("GET /leak HTTP/1.1\r\nHost: h\r\n\r\n")
	conn.Response("GET")
	conn.Send("GET /victim HTTP/1.1\r\nHost: h\r\n\r\n")
	w := coretest.Receive(t, "the victim parked", victimParked)
	close(release)
	for range 2 {
		if err := coretest.Receive(t, "the goroutine's call", errs); !errors.Is(err, core.ErrOutsideRequest) {
			t.Errorf("the goroutine's call: %v, want ErrOutsideRequest", err)
		}
	}
	w.Wake(nil)
	resp, body := conn.Response("GET")
	if body != "victim\n" || resp.Header.Get("X-Leaked") != "" {
		t.Fatalf("the victim got %v %q", resp.Header, body)
	}
}
