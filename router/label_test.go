package router

import (
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/core/coretest"
)

// labelRecorder is a middleware that records, for each request, the route and the label seen
// before the handler runs and once the response is done.
type labelRecorder struct {
	mu   sync.Mutex
	seen []string
}

func (lr *labelRecorder) middleware(next core.Handler) core.Handler {
	return func(c *core.Ctx) {
		before := c.Route() + "|" + c.Seam().RouteLabel()
		c.OnDone(func(d core.Done) {
			after := c.Route() + "|" + c.Seam().RouteLabel()
			lr.mu.Lock()
			lr.seen = append(lr.seen, before+" "+after+" "+strconv.Itoa(d.Status))
			lr.mu.Unlock()
		})
		next(c)
	}
}

func (lr *labelRecorder) take(t *testing.T) string {
	t.Helper()
	var got string
	coretest.WaitFor(t, "the completion hook", func() bool {
		lr.mu.Lock()
		defer lr.mu.Unlock()
		if len(lr.seen) == 0 {
			return false
		}
		got, lr.seen = lr.seen[0], lr.seen[1:]
		return true
	})
	return got
}

// TestRouteLabels: the router's middleware runs around its own answers as around a route, and
// sees, before the handler as after it, the route pattern (Route) and the label (RouteLabel):
// the pattern for a route, "" and the answer's label for the router's own.
func TestRouteLabels(t *testing.T) {
	lr := &labelRecorder{}
	r := New()
	r.Use(lr.middleware)
	ok := func(c *core.Ctx) { c.WriteString("ok") }
	r.GET("/todos", ok)
	r.GET("/todos/:id", ok)
	r.POST("/todos/:id", ok)
	api := r.Group("/api")
	api.Use(func(next core.Handler) core.Handler { return next })
	api.GET("/items", ok)
	addr := serve(t, r)
	for _, tc := range []struct {
		req, route, label string
		status            int
	}{
		{"GET /todos", "/todos", "/todos", 200},
		{"GET /todos/42", "/todos/:id", "/todos/:id", 200},
		{"HEAD /todos/42", "/todos/:id", "/todos/:id", 200},
		{"GET /api/items", "/api/items", "/api/items", 200},
		{"GET /todos/", "", LabelRedirect, 301},
		{"POST /TODOS/42", "", LabelRedirect, 308},
		{"OPTIONS /todos/42", "", LabelOptions, 200},
		{"DELETE /todos/42", "", LabelMethodNotAllowed, 405},
		{"GET /nothing", "", LabelNotFound, 404},
		{"GET /api/nothing", "", LabelNotFound, 404},
	} {
		c := dial(t, addr)
		c.Send(tc.req + " HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\n\r\n")
		method, _, _ := strings.Cut(tc.req, " ")
		resp, _ := c.Response(method)
		if resp.StatusCode != tc.status {
			t.Errorf("%s: status %d, want %d", tc.req, resp.StatusCode, tc.status)
		}
		want := tc.route + "|" + tc.label
		if got := lr.take(t); got != want+" "+want+" "+strconv.Itoa(tc.status) {
			t.Errorf("%s: middleware saw %q, want %q before and after, and %d", tc.req, got, want, tc.status)
		}
	}
}

// TestRouteLabelsCustomAnswers: the router's handlers for its own answers (NotFound,
// MethodNotAllowed, GlobalOPTIONS) run inside the middleware and read the label; a Router
// without the automatic answers labels every miss not found.
func TestRouteLabelsCustomAnswers(t *testing.T) {
	lr := &labelRecorder{}
	r := New()
	r.Use(lr.middleware)
	say := func(c *core.Ctx) { c.WriteString(c.Seam().RouteLabel()) }
	r.NotFound, r.MethodNotAllowed, r.GlobalOPTIONS = say, say, say
	r.GET("/a", say)
	addr := serve(t, r)
	for _, tc := range []struct{ req, label string }{
		{"GET /b", LabelNotFound},
		{"PUT /a", LabelMethodNotAllowed},
		{"OPTIONS /a", LabelOptions},
	} {
		c := dial(t, addr)
		c.Send(tc.req + " HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\n\r\n")
		method, _, _ := strings.Cut(tc.req, " ")
		if _, body := c.Response(method); body != tc.label {
			t.Errorf("%s: the router's handler saw %q, want %q", tc.req, body, tc.label)
		}
		lr.take(t)
	}

	var bare Router // every automatic answer off
	bare.Use(lr.middleware)
	bare.GET("/a", say)
	addr = serve(t, &bare)
	for _, req := range []string{"GET /a/", "PUT /a", "OPTIONS /a"} {
		c := dial(t, addr)
		c.Send(req + " HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\n\r\n")
		method, _, _ := strings.Cut(req, " ")
		if resp, _ := c.Response(method); resp.StatusCode != 404 {
			t.Errorf("%s: status %d from the bare router", req, resp.StatusCode)
		}
		if got, want := lr.take(t), "|"+LabelNotFound; !strings.HasPrefix(got, want+" "+want) {
			t.Errorf("%s: middleware saw %q", req, got)
		}
	}
}
