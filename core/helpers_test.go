package core

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// patience bounds every wait of these tests for something that must happen: a response, a
// closed connection, a condition. It only runs out on a hang; on this small, loaded machine a
// request that takes microseconds may take a second, and a test must not fail then. (It is
// coretest.Patience, which package core's own tests cannot import.)
const patience = 30 * time.Second

// startServer serves h on a free loopback port for the duration of the test.
func startServer(t testing.TB, h Handler, o Options) (*Server, string) {
	t.Helper()
	o.Addr = "127.0.0.1:0"
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	s := NewServer(h, o)
	if err := s.Listen(); err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() { errc <- s.ListenAndServe() }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		s.Shutdown(ctx)
		if err := <-errc; err != ErrServerClosed {
			t.Errorf("ListenAndServe returned %v", err)
		}
	})
	return s, s.Addr().String()
}

// logBuffer collects log lines for tests that check what the server logged.
type logBuffer struct {
	mu sync.Mutex
	sb strings.Builder
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.sb.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.sb.String()
}

// rawConn is a test client speaking bytes.
type rawConn struct {
	t testing.TB
	net.Conn
	br *bufio.Reader
}

func dial(t testing.TB, addr string) *rawConn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(patience))
	return &rawConn{t, c, bufio.NewReader(c)}
}

func (c *rawConn) send(s string) {
	c.t.Helper()
	if _, err := io.WriteString(c.Conn, s); err != nil {
		c.t.Fatal(err)
	}
}

// response reads one response; method is the request's (HEAD responses have no body).
func (c *rawConn) response(method string) (*http.Response, string) {
	c.t.Helper()
	c.SetReadDeadline(time.Now().Add(patience)) // a response that never comes fails the test
	resp, err := http.ReadResponse(c.br, &http.Request{Method: method})
	if err != nil {
		c.t.Fatalf("reading response: %v", err)
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		c.t.Fatalf("reading body: %v", err)
	}
	resp.Body.Close()
	return resp, string(body)
}

// expectEOF checks that the server closes the connection (within patience).
func (c *rawConn) expectEOF() {
	c.t.Helper()
	c.SetReadDeadline(time.Now().Add(patience))
	b, err := c.br.ReadByte()
	if err == nil {
		rest, _ := c.br.Peek(c.br.Buffered())
		c.t.Fatalf("connection still open; read %q%q", b, rest)
	}
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		c.t.Fatalf("connection still open after %v", patience)
	}
}

// receive returns the next value sent on ch, failing the test, with what, when none has come
// after patience.
func receive[T any](t testing.TB, what string, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(patience):
		t.Fatalf("%s: nothing after %v", what, patience)
		var zero T
		return zero
	}
}

func helloHandler(c *Ctx) {
	c.SetHeader("Content-Type", "text/plain")
	c.WriteString("Hello World")
}

func newTestLogger(w io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// readResp reads one GET response and returns its body, or the error that stopped the read.
func readResp(c *rawConn) (string, error) {
	resp, err := http.ReadResponse(c.br, &http.Request{Method: "GET"})
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

func newReader(c net.Conn) *bufio.Reader { return bufio.NewReader(c) }

// openConns counts the connections the server's loops hold, asking each loop.
func openConns(s *Server) int {
	s.mu.Lock()
	loops := s.loops
	s.mu.Unlock()
	total := 0
	for _, l := range loops {
		n := make(chan int, 1)
		l.Post(func() { n <- l.nconns })
		total += <-n
	}
	return total
}
