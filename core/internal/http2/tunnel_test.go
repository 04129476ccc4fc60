package http2

import (
	"context"
	"errors"
	"testing"

	"github.com/dwellhttp/dwell/core/internal/h2"
	"github.com/dwellhttp/dwell/core/internal/serve"
	"github.com/dwellhttp/dwell/core/internal/servetest"
)

// TestH2TunnelGivesAgainWhatItDidNotTake: on a stream handed over, what the protocol leaves of
// the DATA that came comes again in front of the next DATA, and the stream's window counts it
// read only once taken.
func TestH2TunnelGivesAgainWhatItDidNotTake(t *testing.T) {
	p := servetest.NewLines(false)
	_, addr := startServer(t, tunnelHandler(p, 0, nil), serve.Options{})
	c := dialH2(t, addr)
	c.connect(1)
	c.until("the answer to the CONNECT", func() bool { s := c.streams[1]; return s != nil && s.status != 0 })
	r := c.streams[1]
	c.data(1, false, []byte("ab"))
	c.data(1, false, []byte("c\nd"))
	c.until("abc;", func() bool { return string(r.body) == "abc;" })
	c.data(1, false, []byte("\n"))
	c.until("d;", func() bool { return string(r.body) == "abc;d;" })
	if r.end || r.rst {
		t.Fatalf("the stream ended: end %v, reset %v", r.end, r.rst)
	}
}

// TestH2TunnelInputFull: a protocol that takes none of a stream's whole window can make no
// progress — the client may send no more — and the stream closes with ErrInputFull while the
// connection goes on.
func TestH2TunnelInputFull(t *testing.T) {
	p := servetest.NewLines(true)
	_, addr := startServer(t, tunnelHandler(p, 0, nil), serve.Options{})
	c := dialH2(t, addr)
	c.connect(1)
	c.until("the answer to the CONNECT", func() bool { s := c.streams[1]; return s != nil && s.status != 0 })
	for left := h2.DefaultWindow; left > 0; left -= h2.MinMaxFrameSize {
		c.data(1, false, make([]byte, min(left, h2.MinMaxFrameSize)))
	}
	if err := receive(t, "Closed", p.Done); !errors.Is(err, serve.ErrInputFull) {
		t.Fatalf("Closed(%v), want ErrInputFull", err)
	}
	c.get(3, "/hello")
	if r := c.response(3); string(r.body) != "hello" {
		t.Fatalf("the connection after: %q", r.body)
	}
}

// TestProtocolPanicH2: a panic in the Protocol of an HTTP/2 stream handed over (an extended
// CONNECT's) resets that stream (INTERNAL_ERROR), its Closed hearing ErrProtocolPanic, and the
// connection serves its other streams on (until the shutdown's end, in Shutdown's case).
func TestProtocolPanicH2(t *testing.T) {
	for _, at := range []string{"Receive", "Shutdown"} {
		t.Run(at, func(t *testing.T) {
			p := servetest.NewPanicky(at)
			s, addr := startServer(t, tunnelHandler(p, 0, nil), serve.Options{})
			c := dialH2(t, addr)
			c.connect(1)
			c.until("the answer to the CONNECT", func() bool { s := c.streams[1]; return s != nil && s.status != 0 })
			c.get(3, "/hello")
			if r := c.response(3); string(r.body) != "hello" {
				t.Fatalf("the stream beside: %q", r.body)
			}
			if at == "Shutdown" {
				go s.Shutdown(context.Background())
			} else {
				c.data(1, false, []byte("hi"))
			}
			if r := c.response(1); !r.rst || r.code != h2.InternalError {
				t.Fatalf("the stream after the panic: end %v, reset %v (%v), body %q", r.end, r.rst, r.code, r.body)
			}
			if err := receive(t, "Closed", p.Done); err != serve.ErrProtocolPanic {
				t.Fatalf("Closed(%v)", err)
			}
			if at == "Shutdown" {
				if code := c.connError(); code != h2.NoError {
					t.Fatalf("GOAWAY %v after the shutdown", code)
				}
				return
			}
			c.get(5, "/hello")
			if r := c.response(5); string(r.body) != "hello" {
				t.Fatalf("a stream after the panic: %q", r.body)
			}
		})
	}
}
