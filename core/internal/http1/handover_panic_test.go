package http1

import (
	"context"
	"errors"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/dwellhttp/dwell/core/internal/serve"
	"github.com/dwellhttp/dwell/core/internal/servetest"
)

// TestProtocolPanic: a panic in any of a Protocol's methods is logged and closes its connection
// at once — its client sees the close, its Closed hears ErrProtocolPanic — rather than leave it
// open to panic again on its next input; the server goes on serving its other clients. A panic
// in Closed, the last call, is logged and calls nothing more.
func TestProtocolPanic(t *testing.T) {
	for _, tc := range []struct{ at, send string }{
		{"Receive", "hi"},
		{"Drained", "big"},
		{"Timeout", "timeout"},
		{"Shutdown", ""},
		{"Closed", "bye"},
	} {
		t.Run(tc.at, func(t *testing.T) {
			p := servetest.NewPanicky(tc.at)
			logs := &logBuffer{}
			s, addr := startServer(t, func(c *serve.Ctx) {
				if c.Path() != "/up" {
					helloHandler(c)
					return
				}
				if _, err := c.HandOver(p); err != nil {
					t.Errorf("HandOver: %v", err)
				}
			}, serve.Options{Logger: newTestLogger(logs)})
			c := dial(t, addr)
			c.Send("GET /up HTTP/1.1\r\nHost: h\r\n\r\n")
			c.Send("ok")
			if got := readN(t, c.R, 2); got != "ok" {
				t.Fatalf("the protocol's echo: %q", got)
			}
			if tc.send != "" {
				c.Send(tc.send)
			}
			shutdown := make(chan error, 1)
			if tc.at == "Shutdown" {
				go func() { shutdown <- s.Shutdown(context.Background()) }()
			}
			// Read to the end: the megabyte that makes Drained due, if it was asked for.
			c.SetReadDeadline(time.Now().Add(patience))
			if _, err := io.Copy(io.Discard, c.R); errors.Is(err, os.ErrDeadlineExceeded) {
				t.Fatalf("the connection stayed open after the panic: %v", err)
			}
			c.CloseWrite() // a close of the protocol's own (Closed's case) waits for the client's end

			// The connection ended as it would have without the panic in Closed (the protocol's
			// own Close, which the client's end completed), or for the panic.
			err := receive(t, "Closed", p.Done)
			if (err == serve.ErrProtocolPanic) != (tc.at != "Closed") {
				t.Fatalf("Closed(%v)", err)
			}
			waitFor(t, "the panic's log", func() bool { return strings.Contains(logs.String(), "protocol panics in "+tc.at) })
			if tc.at == "Shutdown" {
				if err := receive(t, "the shutdown's end", shutdown); err != nil {
					t.Fatalf("Shutdown: %v", err)
				}
				return
			}
			other := dial(t, addr)
			other.Send("GET / HTTP/1.1\r\nHost: h\r\n\r\n")
			if _, body := other.Response("GET"); body != "Hello World" {
				t.Fatalf("another client after the panic: %q", body)
			}
			if n := p.Closeds.Load(); n != 1 {
				t.Fatalf("Closed called %d times", n)
			}
		})
	}
}
