// Package coretest helps test dwell handlers, as net/http/httptest does for net/http: Serve runs
// a handler on a free loopback port for the length of a test; Dial gives a client that speaks
// HTTP/1.1 as bytes, so that framing, pipelining and pacing are exactly what the test says; a
// RoundTripper makes keep-alive exchanges that allocate nothing, for allocation tests of a
// handler with testing.AllocsPerRun; StartCommand runs a server program as its users do, to test
// its flags, its readiness line and its shutdown on SIGTERM; WaitFor and Receive wait for what a
// test expects to happen, rather than for a time, and fail the test only on a hang. dwell's own
// packages and examples test themselves with it.
package coretest

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/dwellhttp/dwell/core"
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

// A Conn is a client connection that sends bytes as given and reads responses.
type Conn struct {
	T            testing.TB    // the test that owns the connection
	*net.TCPConn               // the connection, for writes and deadlines of the test's own
	R            *bufio.Reader // reads from the connection; Response reads through it
}

// Dial connects to addr for the length of the test, with a deadline Patience away, so that a
// server that never answers fails the test rather than hanging it.
func Dial(t testing.TB, addr string) *Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(Patience))
	return &Conn{t, c.(*net.TCPConn), bufio.NewReader(c)}
}

// Send writes s.
func (c *Conn) Send(s string) {
	c.T.Helper()
	if _, err := io.WriteString(c.TCPConn, s); err != nil {
		c.T.Fatal(err)
	}
}

// Response reads one response to a request of method (HEAD responses have no body) and its
// body.
func (c *Conn) Response(method string) (*http.Response, string) {
	c.T.Helper()
	resp, err := http.ReadResponse(c.R, &http.Request{Method: method})
	if err != nil {
		c.T.Fatalf("reading response: %v", err)
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		c.T.Fatalf("reading body: %v", err)
	}
	resp.Body.Close()
	return resp, string(b)
}

// ExpectEOF checks that the server closes the connection, failing the test when it has not
// after Patience.
func (c *Conn) ExpectEOF() {
	c.T.Helper()
	c.SetReadDeadline(time.Now().Add(Patience))
	b, err := c.R.ReadByte()
	if err == nil {
		rest, _ := c.R.Peek(c.R.Buffered())
		c.T.Fatalf("connection still open; read %q%q", b, rest)
	}
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		c.T.Fatalf("connection still open after %v", Patience)
	}
}

// A RoundTripper sends one fixed request and reads one fixed-size response over a kept-alive
// connection, allocating nothing itself, so that testing.AllocsPerRun counts the server's
// allocations alone.
type RoundTripper struct {
	conn net.Conn
	req  []byte
	resp []byte
}

// NewRoundTripper connects to addr and learns the response size from a first exchange, which
// must be a 200.
func NewRoundTripper(t testing.TB, addr, req string) *RoundTripper {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	rt := &RoundTripper{conn: c, req: []byte(req)}
	if _, err := c.Write(rt.req); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64<<10)
	n, err := c.Read(buf)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(buf[:n]), "HTTP/1.1 200 ") {
		t.Fatalf("first response %q", buf[:n])
	}
	rt.resp = make([]byte, n)
	return rt
}

// Do makes one exchange.
func (rt *RoundTripper) Do(t testing.TB) {
	if _, err := rt.conn.Write(rt.req); err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadFull(rt.conn, rt.resp); err != nil {
		t.Fatal(err)
	}
}
