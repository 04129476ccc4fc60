package core

import (
	"strings"
	"testing"
)

// TestInputBehindAWaitingRequest: what arrives behind a request whose handler waits is kept
// only if it can be the next request. Pipelined requests are answered after it, on the same
// connection; junk is dropped at once — it costs nothing while the handler waits — and the
// connection closes after the response, which the client still reads whole.
func TestInputBehindAWaitingRequest(t *testing.T) {
	parked := make(chan Waker, 1)
	_, addr := startServer(t, func(c *Ctx) {
		if c.Path() == "/park" {
			parked <- c.Waker()
			c.Suspend(0)
		}
		c.WriteString("answered " + c.Path())
	}, Options{})
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
				if !resp.Close {
					t.Fatal("no Connection: close on the response before the junk")
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
