//go:build !race && linux && !dwell_portable

package router

import (
	"github.com/dwellhttp/dwell/internal/ctxhook"
	"testing"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/core/coretest"
)

// The allocation budget of routing: nothing for a static route, and one allocation (the
// parameter slice httprouter's lookup makes) for a route with parameters. Reading a parameter
// as a string costs one more (the owned copy); as bytes, nothing.

// TestRouteAllocations measures whole requests over a kept-alive connection, the server's
// allocations included (core's own budget for them is zero).
func TestRouteAllocations(t *testing.T) {
	r := New()
	for _, rt := range apiRoutes {
		r.Handle(rt.method, rt.path, func(c *core.Ctx) {
			switch c.Query("read") {
			case "string":
				c.WriteString(c.Param("number"))
			case "bytes":
				c.Write(c.ParamBytes("number"))
			}
			c.WriteString("ok")
		})
	}
	addr := serve(t, r)
	for _, tc := range []struct {
		name, target string
		max          float64
	}{
		{"static", "/search/repositories", 0},
		{"one param", "/users/1027", 1},
		{"three params", "/repos/dwellhttp/dwell/issues/42", 1},
		{"catch-all", "/static/css/site.css", 1},
		{"param read as a string", "/repos/dwellhttp/dwell/issues/42?read=string", 2},
		{"param read as bytes", "/repos/dwellhttp/dwell/issues/42?read=bytes", 1},
	} {
		rt := coretest.NewRoundTripper(t, addr, "GET "+tc.target+" HTTP/1.1\r\nHost: localhost\r\n\r\n")
		for range 100 {
			rt.Do(t)
		}
		n := testing.AllocsPerRun(2000, func() { rt.Do(t) })
		t.Logf("%s (%s): %v allocations per request", tc.name, tc.target, n)
		if n != tc.max {
			t.Errorf("%s (%s): %v allocations per request, want %v", tc.name, tc.target, n, tc.max)
		}
	}
}

// TestDispatchAllocations measures the router alone.
func TestDispatchAllocations(t *testing.T) {
	r := apiRouter()
	var c core.Ctx
	for _, tc := range []struct {
		method, path string
		max          float64
	}{
		{"GET", "/", 0},
		{"DELETE", "/user/emails", 0},
		{"HEAD", "/search/code", 0},
		{"GET", "/users/1027", 1},
		{"GET", "/repos/dwellhttp/dwell/issues/42/comments", 1},
		{"GET", "/static/css/site.css", 1},
	} {
		n := testing.AllocsPerRun(1000, func() {
			r.dispatch(&c, tc.method, tc.path)
			ctxhook.SetParams(&c, nil)
		})
		t.Logf("%s %s: %v allocations", tc.method, tc.path, n)
		if n > tc.max {
			t.Errorf("%s %s: %v allocations, want at most %v", tc.method, tc.path, n, tc.max)
		}
	}
}
