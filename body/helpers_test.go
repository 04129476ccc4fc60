package body_test

import (
	"bufio"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/dwellhttp/dwell/core"
)

// startServer serves h on a free loopback port for the duration of the test.
func startServer(t testing.TB, h core.Handler, o core.Options) string {
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
	return s.Addr().String()
}

// rawConn is a test client speaking bytes, so that framing, pipelining and pacing are exact.
type rawConn struct {
	t testing.TB
	*net.TCPConn
	br *bufio.Reader
}

func dial(t testing.TB, addr string) *rawConn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(20 * time.Second))
	return &rawConn{t, c.(*net.TCPConn), bufio.NewReader(c)}
}

func (c *rawConn) send(s string) {
	c.t.Helper()
	if _, err := io.WriteString(c.TCPConn, s); err != nil {
		c.t.Fatal(err)
	}
}

// write sends s whole, or one byte per write so that the server sees every possible split. It
// reports errors rather than failing, so that it can run on its own goroutine.
func (c *rawConn) write(s string, bytewise bool) error {
	if !bytewise {
		_, err := io.WriteString(c.TCPConn, s)
		return err
	}
	for i := 0; i < len(s); i++ {
		if _, err := c.Write([]byte{s[i]}); err != nil {
			return err
		}
	}
	return nil
}

// response reads one response to a request of method (HEAD responses have no body).
func (c *rawConn) response(method string) (*http.Response, string) {
	c.t.Helper()
	resp, err := http.ReadResponse(c.br, &http.Request{Method: method})
	if err != nil {
		c.t.Fatalf("reading response: %v", err)
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		c.t.Fatalf("reading body: %v", err)
	}
	resp.Body.Close()
	return resp, string(b)
}

// expectEOF checks that the server closed the connection.
func (c *rawConn) expectEOF() {
	c.t.Helper()
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	b, err := c.br.ReadByte()
	if err == nil {
		rest, _ := c.br.Peek(c.br.Buffered())
		c.t.Fatalf("connection still open; read %q%q", b, rest)
	}
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		c.t.Fatal("connection still open after 5s")
	}
}

// expectNothing checks that the server sent nothing (yet) within d.
func (c *rawConn) expectNothing(d time.Duration) {
	c.t.Helper()
	c.SetReadDeadline(time.Now().Add(d))
	defer c.SetReadDeadline(time.Now().Add(20 * time.Second))
	if b, err := c.br.Peek(1); err == nil {
		c.t.Fatalf("unexpected bytes from the server: %q", b)
	}
}

// payload is n deterministic bytes of every value, CR, LF and digits included, so that body
// bytes that look like framing are exercised.
func payload(n int, seed byte) []byte {
	b := make([]byte, n)
	x := uint32(seed) + 1
	for i := range b {
		x = x*1664525 + 1013904223
		b[i] = byte(x >> 24)
	}
	return b
}

// digest is what echo handlers report: the length and a short hash.
func digest(b []byte) string {
	h := sha256.Sum256(b)
	return fmt.Sprintf("n=%d sha=%x", len(b), h[:6])
}

// chunked encodes b with the chunked coding, in chunks cycling through sizes, followed by
// the trailer lines (each "Name: value").
func chunked(b []byte, sizes []int, trailers ...string) string {
	var sb strings.Builder
	for i := 0; len(b) > 0; i++ {
		n := min(sizes[i%len(sizes)], len(b))
		fmt.Fprintf(&sb, "%x\r\n", n)
		sb.Write(b[:n])
		sb.WriteString("\r\n")
		b = b[n:]
	}
	sb.WriteString("0\r\n")
	for _, t := range trailers {
		sb.WriteString(t + "\r\n")
	}
	sb.WriteString("\r\n")
	return sb.String()
}

// post builds a POST request carrying b with a Content-Length, or chunked with a trailer.
func post(path string, b []byte, isChunked bool, extra string) string {
	if isChunked {
		return "POST " + path + " HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n" + extra + "\r\n" +
			chunked(b, []int{1, 100, 4096, 70000, 3}, "X-Check: "+digest(b))
	}
	return fmt.Sprintf("POST %s HTTP/1.1\r\nHost: h\r\nContent-Length: %d\r\n%s\r\n%s", path, len(b), extra, b)
}
