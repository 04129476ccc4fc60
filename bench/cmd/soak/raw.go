package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strings"
	"syscall"
	"time"
)

// expected classifies the failures a shutdown makes, which are not the server's: a connection
// refused (the server has stopped accepting), and an idle HTTP/1.1 connection closed as the
// next request went out on it (RFC 9112 §9.3.1: the client may retry an idempotent one).
func expected(err error) (string, bool) {
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return "refused", true
	case strings.Contains(err.Error(), "server closed idle connection"):
		return "idle connection closed under a request", true
	}
	return "", false
}

// pipelined is what each pipelined request asks for, and the body it wants.
var pipelined = []struct{ path, body string }{
	{"/hello", "hello"}, {"/std/hello", "hello"}, {"/stream?n=3", string(streamed(3))}, {"/sleep?ms=1", "slept"},
}

// pipeline sends 1 to 16 requests at once on a connection, then reads their responses, 50
// times, on a new connection each round of 50.
func pipeline(ctx context.Context, t *tally, addr string) {
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.fail("pipelining: dial", err)
		return
	}
	defer conn.Close()
	br := bufio.NewReader(conn)
	for range 50 {
		if ctx.Err() != nil {
			return
		}
		var sb strings.Builder
		depth := 1 + rand.IntN(16)
		asked := make([]int, depth)
		for i := range asked {
			asked[i] = rand.IntN(len(pipelined))
			fmt.Fprintf(&sb, "GET %s HTTP/1.1\r\nHost: soak\r\n\r\n", pipelined[asked[i]].path)
		}
		if _, err := io.WriteString(conn, sb.String()); err != nil {
			t.fail("pipelining: write", err)
			return
		}
		for i, k := range asked {
			if i == 0 && t.shutdown() {
				if _, err := br.Peek(1); err == io.EOF {
					// Not a byte of the batch's first answer: the server closed the connection,
					// idle, as the batch went out — HTTP/1.1's own race (RFC 9112 §9.3.1).
					t.expect("idle connection closed under a request")
					return
				}
			}
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				t.fail("pipelining", fmt.Errorf("response %d of %d: %w", i+1, depth, err))
				return
			}
			b, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil || resp.StatusCode != 200 || string(b) != pipelined[k].body {
				t.fail("pipelining "+pipelined[k].path, fmt.Errorf("status %d, %d bytes, %v", resp.StatusCode, len(b), err))
				return
			}
			t.ok.Add(1)
			if resp.Close {
				if !t.shutdown() {
					t.fail("pipelining", fmt.Errorf("a response said Connection: close, the server not shutting down"))
				}
				return
			}
		}
	}
}

// resetRequests are what a client sends before it resets or half-closes its connection.
var resetRequests = []string{
	"GET /do?ms=40 HTTP/1.1\r\nHost: soak\r\n\r\n",
	"GET /call HTTP/1.1\r\nHost: soak\r\n\r\n",
	"GET /poll?after=1000000000 HTTP/1.1\r\nHost: soak\r\n\r\n",
	"GET /sleep?ms=50 HTTP/1.1\r\nHost: soak\r\n\r\n",
	"GET /stream?n=2000 HTTP/1.1\r\nHost: soak\r\n\r\n",
	"POST /echo HTTP/1.1\r\nHost: soak\r\nContent-Length: 100000\r\n\r\npartial",
	"POST /std/echo HTTP/1.1\r\nHost: soak\r\nContent-Length: 100000\r\n\r\npartial",
	"GET /std/hello HTTP/1.1\r\nHost: soak\r\n\r\nGET /hel",
	"GET /ws HTTP/1.1\r\nHost: soak\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n",
}

// reset sends a request (or part of one), waits up to 20 ms, and resets the connection (half
// the time), half-closes it, or closes it.
func reset(ctx context.Context, t *tally, addr string) {
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.fail("reset: dial", err)
		return
	}
	io.WriteString(conn, resetRequests[rand.IntN(len(resetRequests))])
	time.Sleep(time.Duration(rand.IntN(20)) * time.Millisecond)
	switch rand.IntN(4) {
	case 0, 1:
		conn.(*net.TCPConn).SetLinger(0)
	case 2:
		conn.(*net.TCPConn).CloseWrite()
		time.Sleep(time.Duration(rand.IntN(5)) * time.Millisecond)
	}
	conn.Close()
	t.expect("connections reset or closed mid-request")
}
