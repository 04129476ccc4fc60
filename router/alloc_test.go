//go:build !race && linux && !dwell_portable

package router

import (
	"testing"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/core/coretest"
)

// The allocation budget of routing: nothing for a static route (one without parameters, beside
// a parameter or not), and one allocation (the parameter slice httprouter's lookup makes) for
// a route with parameters. Reading a parameter as a string costs one more (the owned copy); as
// bytes, nothing.

// besideRoutes are added to apiRoutes in the allocation tests: static routes beside the table's
// parameters and catch-all, and Any routes.
var besideRoutes = []struct{ method, path string }{
	{"GET", "/users/new"},
	{"GET", "/static/app.css"},
	{"ANY", "/hooks/:name"},
	{"ANY", "/hooks/github"},
}

// allocRouter returns the apiRoutes and besideRoutes, each served by h.
func allocRouter(h core.Handler) *Router {
	r := New()
	for _, rt := range append(apiRoutes[:len(apiRoutes):len(apiRoutes)], besideRoutes...) {
		if rt.method == "ANY" {
			r.Any(rt.path, h)
		} else {
			r.Handle(rt.method, rt.path, h)
		}
	}
	return r
}

// TestRouteAllocations measures whole requests over a kept-alive connection, the server's
// allocations included (core's own budget for them is zero).
func TestRouteAllocations(t *testing.T) {
	r := allocRouter(func(c *core.Ctx) {
		switch v, _ := c.Bytes().Query("read"); string(v) { // compared without a copy
		case "string":
			c.WriteString(c.Param("number"))
		case "bytes":
			c.Write(c.Bytes().Param("number"))
		}
		c.WriteString("ok")
	})
	addr := serve(t, r)
	for _, tc := range []struct {
		name, target string
		max          float64
	}{
		{"static", "/search/repositories", 0},
		{"static, PROPFIND to an Any route", "PROPFIND /hooks/github", 0},
		{"param, PROPFIND to an Any route", "PROPFIND /hooks/gitlab", 1},
		{"one param", "/users/1027", 1},
		{"three params", "/repos/dwellhttp/dwell/issues/42", 1},
		{"catch-all", "/static/css/site.css", 1},
		{"static beside a param", "/users/new", 0},
		{"param beside a static", "/users/newer", 1},
		{"static beside a catch-all", "/static/app.css", 0},
		{"static Any beside a param", "/hooks/github", 0},
		{"Any with a param", "/hooks/gitlab", 1},
		{"param read as a string", "/repos/dwellhttp/dwell/issues/42?read=string", 2},
		{"param read as bytes", "/repos/dwellhttp/dwell/issues/42?read=bytes", 1},
	} {
		line := tc.target // "METHOD /path", or "/path" for a GET
		if line[0] == '/' {
			line = "GET " + line
		}
		rt := coretest.NewRoundTripper(t, addr, line+" HTTP/1.1\r\nHost: localhost\r\n\r\n")
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
	r := allocRouter(func(*core.Ctx) {})
	r.Handler()
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
		{"GET", "/users/new", 0},
		{"HEAD", "/users/new", 0},
		{"GET", "/users/newer", 1},
		{"GET", "/static/app.css", 0},
		{"PROPFIND", "/hooks/github", 0},
		{"POST", "/hooks/github", 0},
		{"PROPFIND", "/hooks/gitlab", 1},
	} {
		if !r.dispatch(&c, tc.method, tc.path) {
			t.Fatalf("%s %s missed", tc.method, tc.path)
		}
		n := testing.AllocsPerRun(1000, func() {
			r.dispatch(&c, tc.method, tc.path)
			c.Seam().SetParams(nil)
		})
		t.Logf("%s %s: %v allocations", tc.method, tc.path, n)
		if n != tc.max {
			t.Errorf("%s %s: %v allocations, want %v", tc.method, tc.path, n, tc.max)
		}
	}
}
