package http1

import (
	"context"
	"errors"
	"io"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dwellhttp/dwell/core/internal/serve"
)

// panicky is a Protocol that panics in the method named at (Receive: for any input but "ok"),
// and otherwise echoes what it receives — "big" with a megabyte (for Drained), "timeout" by setting a timeout (for Timeout),
// "bye" with a close (for Closed). It counts its Closed calls and sends each one's error.
type panicky struct {
	at      string
	closed  chan error
	closeds atomic.Int32
}

func newPanicky(at string) *panicky { return &panicky{at: at, closed: make(chan error, 4)} }

func (p *panicky) maybe(method string) {
	if p.at == method {
		panic("protocol panics in " + method)
	}
}

func (p *panicky) Receive(c *serve.Conn, in []byte) int {
	if string(in) != "ok" {
		p.maybe("Receive")
	}
	switch string(in) {
	case "big":
		c.Write(make([]byte, 1<<20))
	case "timeout":
		c.SetTimeout(time.Millisecond)
	case "bye":
		c.Close()
	default:
		c.Write(in)
	}
	return len(in)
}

func (p *panicky) Drained(*serve.Conn) { p.maybe("Drained") }
func (p *panicky) Timeout(*serve.Conn) { p.maybe("Timeout") }
func (p *panicky) Shutdown(c *serve.Conn) {
	p.maybe("Shutdown")
	c.Close()
}
func (p *panicky) Closed(_ *serve.Conn, err error) {
	p.closeds.Add(1)
	p.closed <- err
	p.maybe("Closed")
}

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
			p := newPanicky(tc.at)
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
			err := receive(t, "Closed", p.closed)
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
			if n := p.closeds.Load(); n != 1 {
				t.Fatalf("Closed called %d times", n)
			}
		})
	}
}
