package middleware_test

import (
	"io"
	"strings"
	"testing"

	"github.com/dwellhttp/dwell/body"
	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/core/coretest"
	"github.com/dwellhttp/dwell/middleware"
)

// TestBodyLimit: a body over the route's limit gets the server's 413 — before it is sent when
// declared — through the other middleware: the request id stays and the access log says 413.
// The limit is the route's, under the server's.
func TestBodyLimit(t *testing.T) {
	logger, out := jsonLogger()
	read := func(c *core.Ctx) {
		b, err := io.ReadAll(body.Reader(c))
		if err == nil {
			c.WriteString(string(b))
		}
	}
	h := chain(read, middleware.AssignRequestID, middleware.AccessLog(logger), middleware.BodyLimit(10))
	_, addr := coretest.Serve(t, h, core.Options{MaxBodyBytes: 1 << 20})
	cases := []struct {
		name, req string
		status    int
	}{
		{"under", "POST / HTTP/1.1\r\nHost: h\r\nX-Request-Id: b1\r\nContent-Length: 10\r\n\r\n0123456789", 200},
		{"declared over", "POST / HTTP/1.1\r\nHost: h\r\nX-Request-Id: b1\r\nContent-Length: 11\r\nExpect: 100-continue\r\n\r\n", 413},
		{"chunked over", "POST / HTTP/1.1\r\nHost: h\r\nX-Request-Id: b1\r\nTransfer-Encoding: chunked\r\n\r\n6\r\n012345\r\n6\r\n012345\r\n0\r\n\r\n", 413},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := dialRaw(t, addr)
			c.Send(tc.req)
			resp, got := c.Response("POST")
			if resp.StatusCode != tc.status || resp.Header.Get("X-Request-Id") != "b1" {
				t.Fatalf("got %d %q %q", resp.StatusCode, resp.Header, got)
			}
			if tc.status == 413 && !strings.Contains(got, "too large") {
				t.Fatalf("body %q", got)
			}
			if m := out.nextJSON(t); m["status"] != float64(tc.status) || m["request_id"] != "b1" {
				t.Fatalf("logged %v", m)
			}
		})
	}
}
