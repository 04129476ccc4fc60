package router

import (
	"sync"
	"testing"
	"time"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/core/coretest"
)

// trace returns middleware that writes "name>" before the handler and "<name" after it.
func trace(name string) func(core.Handler) core.Handler {
	return func(next core.Handler) core.Handler {
		return func(c *core.Ctx) {
			c.WriteString(name + ">")
			next(c)
			c.WriteString("<" + name)
		}
	}
}

// TestMiddlewareOrder: the first Use is outermost, the router's outside its groups', outer
// groups outside inner ones, whether Use comes before or after the routes.
func TestMiddlewareOrder(t *testing.T) {
	r := New()
	r.Use(trace("a"), trace("b"))
	api := r.Group("/api")
	r.GET("/top", reply("top"))
	api.GET("/x", reply("x"))
	api.Use(trace("c"))
	v1 := api.Group("/v1/")
	v1.Use(trace("d"))
	v1.GET("/users/:id", reply("user"))
	r.Use(trace("e")) // after the routes: still applies to them
	other := r.Group("/other")
	other.Use(trace("f"))
	other.GET("/y", reply("y"))

	cl := dial(t, serve(t, r))
	for _, tc := range []struct {
		method, target string
		code           int
		body           string
	}{
		{"GET", "/top", 200, "a>b>e>top<e<b<a"},
		{"GET", "/api/x", 200, "a>b>e>c>x<c<e<b<a"},
		{"GET", "/api/v1/users/7", 200, "a>b>e>c>d>user id=7<d<c<e<b<a"},
		{"GET", "/other/y", 200, "a>b>e>f>y<f<e<b<a"},
		// The router's own replies run inside the router's middleware only.
		{"GET", "/nope", 404, "a>b>e>404 page not found\n<e<b<a"},
		{"POST", "/top", 405, "a>b>e>405 method not allowed\n<e<b<a"},
		{"OPTIONS", "/top", 200, "a>b>e><e<b<a"},
		{"GET", "/top/", 301, "a>b>e><e<b<a"},
	} {
		resp, body := cl.do(tc.method, tc.target)
		if resp.StatusCode != tc.code || body != tc.body {
			t.Errorf("%s %s: %d %q, want %d %q", tc.method, tc.target, resp.StatusCode, body, tc.code, tc.body)
		}
	}
}

// TestMiddlewareWrapsOnce: middleware is applied when Handler is called, once per route, not
// per request.
func TestMiddlewareWrapsOnce(t *testing.T) {
	var mu sync.Mutex
	wraps := 0
	r := New()
	r.Use(func(next core.Handler) core.Handler {
		mu.Lock()
		wraps++
		mu.Unlock()
		return next
	})
	r.GET("/a", reply("a"))
	r.GET("/b/:x", reply("b"))
	cl := dial(t, serve(t, r))
	for range 5 {
		cl.do("GET", "/a")
		cl.do("GET", "/b/1")
		cl.do("GET", "/nope")
	}
	mu.Lock()
	defer mu.Unlock()
	if wraps != 3 { // two routes and the router's own replies
		t.Errorf("middleware applied %d times, want 3", wraps)
	}
}

// TestMiddlewareParks: middleware runs in the handler's coroutine, so it may park before and
// after the handler.
func TestMiddlewareParks(t *testing.T) {
	r := New()
	r.Use(func(next core.Handler) core.Handler {
		return func(c *core.Ctx) {
			if err := c.Suspend(5 * time.Millisecond); err != core.ErrTimeout {
				t.Errorf("Suspend before: %v", err)
			}
			next(c)
			if err := c.Suspend(5 * time.Millisecond); err != core.ErrTimeout {
				t.Errorf("Suspend after: %v", err)
			}
			c.WriteString(" done")
		}
	})
	r.GET("/p/:v", reply("p"))
	cl := dial(t, serve(t, r))
	if resp, body := cl.do("GET", "/p/1"); resp.StatusCode != 200 || body != "p v=1 done" {
		t.Errorf("got %d %q", resp.StatusCode, body)
	}
}

// TestParamAcrossParks: a parameter stays intact while its handler is parked and the loop
// serves other requests, with other paths, in between.
func TestParamAcrossParks(t *testing.T) {
	r := New()
	parked := make(chan core.Waker, 1)
	r.GET("/slow/:name", func(c *core.Ctx) {
		name := c.Param("name")
		parked <- c.Waker()
		if err := c.Suspend(0); err != nil {
			t.Errorf("Suspend: %v", err)
		}
		c.WriteString(name + " " + c.Param("name"))
	})
	r.GET("/fast/:name", reply("fast"))
	addr := serve(t, r)

	done := make(chan string)
	go func() {
		cl := dial(t, addr)
		_, body := cl.do("GET", "/slow/parked-value")
		done <- body
	}()
	w := coretest.Receive(t, "the slow handler", parked)
	cl := dial(t, addr)
	for i := range 50 {
		target := "/fast/XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX"
		if i%2 == 1 {
			target = "/slow-miss/YYYYYYYYYYYYYYYYYYYYYYYYYYYYYYY"
		}
		cl.do("GET", target)
	}
	w.Wake(nil) // only now: the other requests came while it was parked
	if body := coretest.Receive(t, "the parked handler's answer", done); body != "parked-value parked-value" {
		t.Errorf("parked handler wrote %q", body)
	}
}

// TestGroups: prefixes nest, may hold parameters, and ignore a trailing slash.
func TestGroups(t *testing.T) {
	r := New()
	api := r.Group("/api/")
	api.GET("/status", reply("status"))
	u := api.Group("/users/:id")
	u.GET("/posts/:post", reply("post"))
	u.GET("/", reply("user"))
	u.Handle("REPORT", "/audit", reply("audit"))
	root := r.Group("/")
	root.GET("/x", reply("x"))
	cl := dial(t, serve(t, r))
	for _, tc := range []struct {
		method, target string
		code           int
		body           string
	}{
		{"GET", "/api/status", 200, "status"},
		{"GET", "/api/users/7/posts/9", 200, "post id=7 post=9"},
		{"GET", "/api/users/7/", 200, "user id=7"},
		{"GET", "/api/users/7", 301, ""},
		{"REPORT", "/api/users/7/audit", 200, "audit id=7"},
		{"GET", "/x", 200, "x"},
	} {
		resp, body := cl.do(tc.method, tc.target)
		if resp.StatusCode != tc.code || body != tc.body {
			t.Errorf("%s %s: %d %q, want %d %q", tc.method, tc.target, resp.StatusCode, body, tc.code, tc.body)
		}
	}
}
