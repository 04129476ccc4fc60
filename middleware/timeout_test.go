package middleware_test

import (
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/core/coretest"
	"github.com/dwellhttp/dwell/middleware"
	"github.com/dwellhttp/dwell/wait"
)

// TestTimeout: a request past its deadline gets the server's 503 when nothing was sent — from
// a parked handler or a pending continuation — its context says DeadlineExceeded, a started
// response is cut, and a quick one is not touched.
func TestTimeout(t *testing.T) {
	ctxErr := make(chan error, 1)
	handler := func(c *core.Ctx) {
		switch c.Path() {
		case "/quick":
			c.WriteString("quick")
		case "/sleep":
			ctx := c.Context()
			if _, ok := ctx.Deadline(); !ok {
				c.WriteString("no deadline")
				return
			}
			var never wait.Event
			err := never.Wait(c, time.Minute)
			if errors.Is(err, core.ErrTimeout) {
				ctxErr <- ctx.Err()
			}
		case "/later":
			wait.After(c, time.Minute, func(c *core.Ctx, err error) {})
		case "/started":
			c.WriteString("partial")
			c.Flush()
			wait.Sleep(c, time.Minute)
		}
	}
	logger, out := jsonLogger()
	_, addr := coretest.Serve(t, chain(handler, middleware.AccessLog(logger), middleware.Timeout(100*time.Millisecond)), core.Options{})
	for _, tc := range []struct {
		path   string
		status int
	}{{"/quick", 200}, {"/sleep", 503}, {"/later", 503}} {
		t.Run(tc.path, func(t *testing.T) {
			c := dialRaw(t, addr)
			c.Send("GET " + tc.path + " HTTP/1.1\r\nHost: h\r\n\r\n")
			resp, body := c.Response("GET")
			if resp.StatusCode != tc.status {
				t.Fatalf("got %d %q", resp.StatusCode, body)
			}
			if m := out.nextJSON(t); m["status"] != float64(tc.status) {
				t.Fatalf("logged %v", m)
			}
		})
	}
	if err := <-ctxErr; err != context.DeadlineExceeded {
		t.Fatalf("context error %v", err)
	}
	t.Run("started", func(t *testing.T) {
		c := dialRaw(t, addr)
		c.Send("GET /started HTTP/1.1\r\nHost: h\r\n\r\n")
		resp, err := readResponse(c)
		if err != nil {
			t.Fatal(err)
		}
		if b, err := io.ReadAll(resp.Body); string(b) != "partial" || !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Fatalf("body %q, %v: want the stream cut", b, err)
		}
	})
}
