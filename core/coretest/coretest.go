// Package coretest helps test dwell handlers, as net/http/httptest does for net/http: Serve runs
// a handler on a free loopback port for the length of a test; Dial gives a client that speaks
// HTTP/1.1 as bytes, so that framing, pipelining and pacing are exactly what the test says; a
// RoundTripper makes keep-alive exchanges that allocate nothing, for allocation tests of a
// handler with testing.AllocsPerRun; StartCommand runs a server program as its users do, to test
// its flags, its readiness line and its shutdown on SIGTERM; WaitFor and Receive wait for what a
// test expects to happen, rather than for a time, and fail the test only on a hang. Do and a
// Client run requests through a handler in process, as httptest.NewRecorder does for net/http
// — no port, no network, yet on dwell's own loops — and return net/http's *http.Response; an
// Exchange waits until its handler parks (WaitParked), so that a test of a long poll, a stream
// or a Waker wakes it only once it waits. dwell's own packages and examples test themselves
// with it.
package coretest

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/internal/testclient"
)

// Serve serves h on 127.0.0.1 (any port) until the test ends, with o's other options and, unless
// o has one, a logger that discards. It returns the server and its address.
func Serve(t testing.TB, h core.Handler, o core.Options) (*core.Server, string) {
	t.Helper()
	o.Addr = "127.0.0.1:0"
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	s := core.NewServer(h, o)
	if err := s.Listen(); err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() { errc <- s.ListenAndServe() }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		s.Shutdown(ctx)
		if err := <-errc; err != core.ErrServerClosed {
			t.Errorf("ListenAndServe returned %v", err)
		}
	})
	return s, s.Addr().String()
}

// A Conn is a client connection that sends bytes as given and reads responses: Send writes a
// string as it is, Response reads one response and its body (failing the test when none comes
// within Patience), ExpectEOF checks that the server has closed the connection. Its fields are
// the test (T), the connection (for writes and deadlines of the test's own) and the reader
// Response reads through (R).
type Conn = testclient.Conn

// Dial connects to addr for the length of the test, with a deadline Patience away, so that a
// server that never answers fails the test rather than hanging it.
func Dial(t testing.TB, addr string) *Conn {
	t.Helper()
	return testclient.Dial(t, addr)
}

// A RoundTripper sends one fixed request and reads one fixed-size response over a kept-alive
// connection, allocating nothing itself, so that testing.AllocsPerRun counts the server's
// allocations alone: Do makes one exchange.
type RoundTripper = testclient.RoundTripper

// NewRoundTripper connects to addr and learns the response's size from a first exchange, which
// must be a 200.
func NewRoundTripper(t testing.TB, addr, req string) *RoundTripper {
	t.Helper()
	return testclient.NewRoundTripper(t, addr, req)
}
