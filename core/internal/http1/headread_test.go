package http1

import (
	"bufio"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/dwellhttp/dwell/core/internal/serve"
)

// The size of a connection's reads for request heads (conn.go: headRead): small until a read
// fills it, then fourfold each time one does, up to headRead.

// serverConn returns what f reads of the server's one connection, on its loop.
func serverConn[T any](t *testing.T, s *serve.Server, f func(c *serve.Socket) T) T {
	t.Helper()
	s.Mu.Lock()
	loops := s.Loops
	s.Mu.Unlock()
	var got []T
	for _, l := range loops {
		done := make(chan struct{})
		l.Post(func() {
			for _, c := range l.Conns {
				if c != nil {
					got = append(got, f(c))
				}
			}
			close(done)
		})
		receive(t, "the loop", done)
	}
	if len(got) != 1 {
		t.Fatalf("%d connections, want 1", len(got))
	}
	return got[0]
}

func headSizeOf(t *testing.T, s *serve.Server) int {
	t.Helper()
	return serverConn(t, s, func(c *serve.Socket) int { return h1(c).headReadSize() })
}

// roundTrip sends req, n requests in one write, and reads their n responses.
func roundTrip(t *testing.T, w io.Writer, r *bufio.Reader, req string, n int) {
	t.Helper()
	if _, err := io.WriteString(w, strings.Repeat(req, n)); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		resp, err := http.ReadResponse(r, &http.Request{Method: "GET"})
		if err != nil {
			t.Fatalf("response %d of %d: %v", i+1, n, err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != 200 || string(body) != "Hello World" {
			t.Fatalf("response %d of %d: %d %q, %v", i+1, n, resp.StatusCode, body, err)
		}
	}
}

// TestHeadReadSize: a keep-alive client whose requests are small (wrk's) never fills a read, so
// each request is one read of headReadFirst bytes at most; pipelined requests and large heads
// fill reads, which grow until a batch fits in one, and then stay as they are. Over TLS too,
// whose layer holds what a small read leaves of a record: nothing is stranded there.
func TestHeadReadSize(t *testing.T) {
	const hello = "GET / HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n\r\n"
	large := "GET / HTTP/1.1\r\nHost: h\r\nX-Large: " + strings.Repeat("v", 3000) + "\r\n\r\n"
	pki := newPKI(t)
	for _, tr := range []string{"plain", "TLS"} {
		t.Run(tr, func(t *testing.T) {
			var s *serve.Server
			var w io.Writer
			var r *bufio.Reader
			if tr == "TLS" {
				var addr string
				s, addr = startTLS(t, pki, helloHandler, serve.Options{})
				w, r = tlsDial(t, addr, pki.clientConfig(0))
			} else {
				var addr string
				s, addr = startServer(t, helloHandler, serve.Options{})
				c := dial(t, addr)
				w, r = c.TCPConn, c.R
			}
			for range 5 {
				roundTrip(t, w, r, hello, 1)
			}
			if n := headSizeOf(t, s); n != headReadFirst {
				t.Fatalf("after single small requests, head reads take %d B, want %d", n, headReadFirst)
			}
			// 16 pipelined: 640 bytes, over headReadFirst.
			roundTrip(t, w, r, hello, 16)
			grown := headSizeOf(t, s)
			if grown <= headReadFirst {
				t.Fatalf("after a pipelined batch of %d B, head reads take %d B; want them grown", 16*len(hello), grown)
			}
			for range 3 {
				roundTrip(t, w, r, hello, 16)
			}
			if n := headSizeOf(t, s); n != grown {
				t.Fatalf("head reads went from %d B to %d B over batches of the size that grew them", grown, n)
			}
			roundTrip(t, w, r, large, 1)
			roundTrip(t, w, r, large, 1)
			if n := headSizeOf(t, s); n != headRead {
				t.Fatalf("after a head of %d B, head reads take %d B, want %d", len(large), n, headRead)
			}
		})
	}
}

// TestHeadReadLeavesJunkInKernel: bytes sent behind a request that parks stay in the kernel,
// but for what the head's read took past the head: on a new connection, under headReadFirst.
func TestHeadReadLeavesJunkInKernel(t *testing.T) {
	const req = "GET /messages?after=0 HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n\r\n"
	var parked atomic.Int64
	s, addr := startServer(t, func(c *serve.Ctx) {
		c.Seam().WakeOnShutdown() // the test's end ends it
		parked.Add(1)
		c.Suspend(0)
	}, serve.Options{})
	c := dial(t, addr)
	c.Send(req + strings.Repeat("x", 60000))
	waitFor(t, "the request parked", func() bool { return parked.Load() == 1 })
	held := serverConn(t, s, func(c *serve.Socket) int { return len(c.In) })
	if held > headReadFirst-len(req) {
		t.Fatalf("%d bytes held behind the parked request, want %d at most", held, headReadFirst-len(req))
	}
}
