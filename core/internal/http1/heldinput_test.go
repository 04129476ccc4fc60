package http1

import (
	"strings"
	"testing"

	"github.com/dwellhttp/dwell/core/internal/serve"
)

// TestInputBehindAWaitingRequest: what arrives behind a request whose handler waits is kept,
// whatever it is — the handler may hand the connection over, and its new owner gets those
// bytes first — within the head read's bound (TestParkedFootprint), the rest left in the
// kernel. When the handler answers over HTTP instead, pipelined requests are answered after it
// on the same connection, and junk is refused as a request would be, as it is behind a
// request answered at once: a 400 after the response, which the client still reads whole, and
// the close.
func TestInputBehindAWaitingRequest(t *testing.T) {
	parked := make(chan serve.Waker, 1)
	_, addr := startServer(t, func(c *serve.Ctx) {
		if c.Path() == "/park" {
			parked <- c.Waker()
			c.Suspend(0)
		}
		c.WriteString("answered " + c.Path())
	}, serve.Options{})
	for _, tc := range []struct {
		name, behind string
		next         bool // the request behind is answered
	}{
		{"a pipelined request", "GET /next HTTP/1.1\r\nHost: h\r\n\r\n", true},
		{"junk", strings.Repeat("x", 60000), false},
		{"junk after empty lines", "\r\n\r\n" + strings.Repeat("\x00", 3000), false},
		{"a body the request does not have", `{"json": "` + strings.Repeat("y", 2000) + `"}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := dial(t, addr)
			c.Send("GET /park HTTP/1.1\r\nHost: h\r\n\r\n" + tc.behind)
			receive(t, "the handler to park", parked).Wake(nil)
			resp, body := c.Response("GET")
			if resp.StatusCode != 200 || body != "answered /park" {
				t.Fatalf("%d %q", resp.StatusCode, body)
			}
			if !tc.next {
				if resp, body := c.Response("GET"); resp.StatusCode != 400 || !resp.Close {
					t.Fatalf("the junk answered %d %q (close %v), want a 400 that closes", resp.StatusCode, body, resp.Close)
				}
				c.ExpectEOF()
				return
			}
			if resp.Close {
				t.Fatal("Connection: close before a pipelined request")
			}
			if _, body := c.Response("GET"); body != "answered /next" {
				t.Fatalf("the pipelined request: %q", body)
			}
		})
	}
}
