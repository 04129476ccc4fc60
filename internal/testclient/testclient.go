// Package testclient is the client side of dwell's tests, for the packages that cannot import
// core/coretest (core's own tests: coretest imports core) and for coretest itself, which
// exports it: a connection that speaks HTTP/1.1 as bytes, keep-alive exchanges that allocate
// nothing, a log destination goroutines can share, and waits that fail only on a hang.
//
// It is a client: it reads the server's responses with net/http's parser, as any client the
// tests stand for would. The server never imports it (go list -deps ./core does not name it);
// only tests and coretest do.
package testclient

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// Patience is how long the helpers wait for something that must happen (a response, a
// connection closing, a condition coming true) before they fail the test. It is long because it
// only runs out on a hang: on a small, loaded machine a request that takes microseconds may take
// a second, and a test that waits for what it expects, rather than for a time, must not fail
// then.
const Patience = 30 * time.Second

// WaitFor polls cond until it holds, and fails the test, saying what it waited for, when it
// still does not after Patience. It is for a state that no channel announces: a count of parked
// requests, a file removed, a listener closed. It sleeps between polls on the test's own
// goroutine, never a loop's (a handler must not call it).
func WaitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(Patience)
	for pause := time.Millisecond; !cond(); pause = min(2*pause, 20*time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not after %v", what, Patience)
		}
		time.Sleep(pause)
	}
}

// Receive returns the next value sent on ch, and fails the test, saying what it waited for, when
// none has come after Patience.
func Receive[T any](t testing.TB, what string, ch <-chan T) T {
	t.Helper()
	timer := time.NewTimer(Patience)
	defer timer.Stop()
	select {
	case v := <-ch:
		return v
	case <-timer.C:
		t.Fatalf("%s: nothing after %v", what, Patience)
		var zero T
		return zero
	}
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
// body, failing the test when it does not come whole within Patience.
func (c *Conn) Response(method string) (*http.Response, string) {
	c.T.Helper()
	c.SetReadDeadline(time.Now().Add(Patience))
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

// NewRoundTripper connects to addr and learns the response's size from a first exchange, which
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
	counted := &countingReader{r: c}
	br := bufio.NewReader(counted)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		t.Fatalf("first response %d", resp.StatusCode)
	}
	rt.resp = make([]byte, counted.n-br.Buffered())
	return rt
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

// Pipeline makes each later exchange n requests in one write, answered by n responses.
func (rt *RoundTripper) Pipeline(n int) {
	one, size := len(rt.req), len(rt.resp)
	rt.req = []byte(strings.Repeat(string(rt.req[:one]), n))
	rt.resp = make([]byte, n*size)
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

// A LogBuffer collects what a logger (or a process's output) writes, for a test to read while
// others write to it.
type LogBuffer struct {
	mu sync.Mutex
	sb strings.Builder
}

// Write appends p.
func (b *LogBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.sb.Write(p)
}

// String returns what was written so far.
func (b *LogBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.sb.String()
}

// Len returns how many bytes were written so far.
func (b *LogBuffer) Len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.sb.Len()
}
