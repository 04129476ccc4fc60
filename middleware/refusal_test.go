package middleware_test

import (
	"strings"
	"testing"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/core/coretest"
	"github.com/dwellhttp/dwell/middleware"
)

// TestJSONRefusal: the server's own answers in the JSON of JSONError, before a handler and
// for one, the request id set by the middleware kept.
func TestJSONRefusal(t *testing.T) {
	h := chain(logged, middleware.AssignRequestID)
	_, addr := coretest.Serve(t, h, core.Options{MaxHeaderBytes: 4 << 10, WriteRefusal: middleware.JSONRefusal})
	for _, tc := range []struct{ req, want, id string }{
		{"GET / HTTP/1.1\r\n\r\n", `{"error":"missing Host header"}` + "\n", ""},
		{"GET / HTTP/1.1\r\nHost: h\r\nX: " + strings.Repeat("a", 5<<10) + "\r\n\r\n", `{"error":"request header fields too large"}` + "\n", ""},
		{"POST /limit HTTP/1.1\r\nHost: h\r\nX-Request-Id: j-1\r\nContent-Length: 10\r\n\r\n0123456789", `{"error":"request body too large"}` + "\n", "j-1"},
	} {
		c := dialRaw(t, addr)
		c.Send(tc.req)
		resp, body := c.Response("POST")
		if body != tc.want || resp.Header.Get("Content-Type") != "application/json" || resp.Header.Get("X-Request-Id") != tc.id {
			t.Errorf("%.40q: %d %v %q", tc.req, resp.StatusCode, resp.Header, body)
		}
	}
}
