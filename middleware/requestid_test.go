package middleware_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/core/coretest"
	"github.com/dwellhttp/dwell/middleware"
	"github.com/dwellhttp/dwell/wait"
)

// TestAssignRequestID: an incoming id is kept only when valid, else a UUID is made; the id is on
// the response, the server's own answers included, and the handler reads it both ways, in its
// continuation too.
func TestAssignRequestID(t *testing.T) {
	_, addr := coretest.Serve(t, chain(func(c *core.Ctx) {
		id := middleware.RequestID(c)
		if v, _ := c.Context().Value(middleware.RequestIDKey).(string); v != id {
			c.WriteString("context disagrees: " + v)
			return
		}
		switch c.Path() {
		case "/panic":
			panic("boom")
		case "/limit":
			c.Seam().LimitBody(5)
			c.ReadBody(make([]byte, 10)) // fails: the server answers 413
		case "/slow":
			wait.Sleep(c, time.Minute) // past the deadline: the server answers 503
		case "/later":
			wait.After(c, time.Millisecond, func(c *core.Ctx, err error) { c.WriteString(middleware.RequestID(c)) })
		default:
			c.WriteString(id)
		}
	}, middleware.AssignRequestID, middleware.Timeout(50*time.Millisecond)), core.Options{})
	long := strings.Repeat("a", 65)
	cases := []struct {
		name, req, status, keep string // keep: the id expected, "" for a new one
	}{
		{"none", "GET / HTTP/1.1\r\nHost: h\r\n\r\n", "200", ""},
		{"kept", "GET / HTTP/1.1\r\nHost: h\r\nX-Request-Id: abc-123_x.y:z+/=\r\n\r\n", "200", "abc-123_x.y:z+/="},
		{"64 kept", "GET / HTTP/1.1\r\nHost: h\r\nX-Request-Id: " + long[:64] + "\r\n\r\n", "200", long[:64]},
		{"65 replaced", "GET / HTTP/1.1\r\nHost: h\r\nX-Request-Id: " + long + "\r\n\r\n", "200", ""},
		{"space replaced", "GET / HTTP/1.1\r\nHost: h\r\nX-Request-Id: a b\r\n\r\n", "200", ""},
		{"quote replaced", "GET / HTTP/1.1\r\nHost: h\r\nX-Request-Id: a\"b\r\n\r\n", "200", ""},
		{"empty replaced", "GET / HTTP/1.1\r\nHost: h\r\nX-Request-Id: \r\n\r\n", "200", ""},
		{"continuation", "GET /later HTTP/1.1\r\nHost: h\r\nX-Request-Id: k1\r\n\r\n", "200", "k1"},
		{"server's 413", "POST /limit HTTP/1.1\r\nHost: h\r\nX-Request-Id: r413\r\nContent-Length: 10\r\n\r\n0123456789", "413", "r413"},
		{"server's 503", "GET /slow HTTP/1.1\r\nHost: h\r\nX-Request-Id: r503\r\n\r\n", "503", "r503"},
		{"server's 500", "GET /panic HTTP/1.1\r\nHost: h\r\nX-Request-Id: r500\r\n\r\n", "500", "r500"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := dialRaw(t, addr)
			c.Send(tc.req)
			resp, body := c.Response("GET")
			id := resp.Header.Get("X-Request-Id")
			if got := resp.Status[:3]; got != tc.status {
				t.Fatalf("status %s, want %s", resp.Status, tc.status)
			}
			if tc.keep != "" && id != tc.keep {
				t.Fatalf("id %q, want %q", id, tc.keep)
			}
			if tc.keep == "" {
				if u, err := uuid.Parse(id); err != nil || len(id) != 36 || u.Version() != 4 || u.Variant() != uuid.RFC4122 {
					t.Fatalf("id %q is not a new random UUID", id)
				}
			}
			if tc.status == "200" && body != id {
				t.Fatalf("the handler read %q, the response says %q", body, id)
			}
		})
	}
}

// TestRequestIDWithout: without the middleware, RequestID is empty.
func TestRequestIDWithout(t *testing.T) {
	_, addr := coretest.Serve(t, func(c *core.Ctx) { c.WriteString("[" + middleware.RequestID(c) + "]") }, core.Options{})
	c := dialRaw(t, addr)
	c.Send("GET / HTTP/1.1\r\nHost: h\r\nX-Request-Id: abc\r\n\r\n")
	if resp, body := c.Response("GET"); body != "[]" || resp.Header.Get("X-Request-Id") != "" {
		t.Fatalf("%q %q", body, resp.Header)
	}
}
