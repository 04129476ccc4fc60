package router

import (
	"strings"
	"testing"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/core/coretest"
)

// TestCtxRoute: the handler, and the middleware around it, read the pattern that matched — the
// group's prefix included, for static and parameter routes alike — and the router's own
// answers have none.
func TestCtxRoute(t *testing.T) {
	r := New()
	r.Use(func(next core.Handler) core.Handler {
		return func(c *core.Ctx) {
			c.SetHeader("X-Route", c.Route())
			next(c)
		}
	})
	show := func(c *core.Ctx) { c.WriteString(c.Route()) }
	r.GET("/todos", show)
	r.GET("/todos/:id", show)
	api := r.Group("/api")
	api.POST("/files/*path", show)
	addr := serve(t, r)
	for _, tc := range []struct{ req, route string }{
		{"GET /todos", "/todos"},
		{"GET /todos/42", "/todos/:id"},
		{"HEAD /todos/42", "/todos/:id"},
		{"POST /api/files/a/b", "/api/files/*path"},
		{"GET /nothing", ""},
	} {
		c := coretest.Dial(t, addr)
		c.Send(tc.req + " HTTP/1.1\r\nHost: h\r\n\r\n")
		method, _, _ := strings.Cut(tc.req, " ")
		resp, body := c.Response(method)
		if got := resp.Header.Get("X-Route"); got != tc.route {
			t.Errorf("%s: middleware saw route %q, want %q", tc.req, got, tc.route)
		}
		if tc.route != "" && method != "HEAD" && body != tc.route {
			t.Errorf("%s: handler saw route %q, want %q", tc.req, body, tc.route)
		}
	}
}
