package router

import (
	"strings"
	"testing"

	"github.com/dwellhttp/dwell/core"
)

func nop(*core.Ctx) {}

// TestConflicts: routes httprouter cannot hold together panic at registration with a dwell
// message naming both routes and the way out.
func TestConflicts(t *testing.T) {
	for _, tc := range []struct {
		name   string
		routes []string // "METHOD /pattern"; the last one conflicts
		want   []string // substrings of the panic message
	}{
		{"static beside param", []string{"GET /users/:id", "GET /users/new"}, []string{
			"dwell: route conflict: GET /users/new conflicts with GET /users/:id, registered earlier",
			`fixed segment "new" and the parameter :id`,
			"give /users/new a path that parts from the other before /users/",
			`c.Param("id") == "new"`,
		}},
		{"param beside static", []string{"GET /users/new", "GET /users/:id"}, []string{
			"dwell: route conflict: GET /users/:id conflicts with GET /users/new, registered earlier",
			"give /users/new a path that parts",
		}},
		{"param beside deeper static", []string{"GET /users/new/x", "GET /users/:id"}, []string{
			"GET /users/:id conflicts with GET /users/new/x",
		}},
		{"picks the conflicting one", []string{"GET /a", "GET /users", "GET /users/list", "POST /users/:id", "GET /users/:id"}, []string{
			"GET /users/:id conflicts with GET /users/list",
		}},
		{"param names differ", []string{"GET /users/:id", "GET /users/:name/posts"}, []string{
			"dwell: route conflict: GET /users/:name/posts conflicts with GET /users/:id",
			"use one name in both routes",
		}},
		{"catch-all then static", []string{"GET /static/*path", "GET /static/css"}, []string{
			"GET /static/css conflicts with GET /static/*path",
			"catch-all *path takes every path below /static/",
			`c.Param("path")`,
		}},
		{"segment root then catch-all", []string{"GET /src/", "GET /src/*filepath"}, []string{
			"GET /src/*filepath conflicts with GET /src/",
			`the catch-all *filepath matches /src/ itself (with filepath "/"); drop the route /src/`,
		}},
		{"catch-all then segment root", []string{"GET /src/*filepath", "GET /src/"}, []string{
			"GET /src/ conflicts with GET /src/*filepath", "drop the route /src/",
		}},
		{"duplicate", []string{"GET /a/:b", "GET /a/:b"}, []string{
			"dwell: route conflict: GET /a/:b conflicts with GET /a/:b", "registered twice",
		}},
		{"duplicate in a group", []string{"GET /api/x", "GROUP /api GET /x"}, []string{
			"GET /api/x conflicts with GET /api/x", "registered twice",
		}},
		{"mid-segment parameter", []string{"GET /v:version/x", "GET /vendor"}, []string{
			"dwell: route conflict: GET /vendor conflicts with GET /v:version/x",
			"give one of them a prefix of its own",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := New()
			var msg string
			for i, spec := range tc.routes {
				f := strings.Fields(spec)
				g := r.group()
				if f[0] == "GROUP" {
					g, f = r.Group(f[1]), f[2:]
				}
				msg = catchPanic(func() { g.Handle(f[0], f[1], nop) })
				if i < len(tc.routes)-1 && msg != "" {
					t.Fatalf("%s panicked: %s", spec, msg)
				}
			}
			if msg == "" {
				t.Fatal("no panic")
			}
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("panic %q\nlacks %q", msg, w)
				}
			}
		})
	}
}

// TestNoConflict: routes that httprouter holds together register without a panic.
func TestNoConflict(t *testing.T) {
	r := New()
	for _, spec := range []string{
		"GET /users/:id", "POST /users/new", // another method, another tree
		"GET /users", "GET /users/:id/posts", "GET /users/:id/posts/:post",
		"GET /files/*path", "GET /filesystem", "GET /v:version/x",
	} {
		f := strings.Fields(spec)
		if msg := catchPanic(func() { r.Handle(f[0], f[1], nop) }); msg != "" {
			t.Errorf("%s: %s", spec, msg)
		}
	}
}

// TestInvalidRegistration: invalid patterns, methods and handlers panic with a dwell message
// before anything reaches the tree.
func TestInvalidRegistration(t *testing.T) {
	for _, tc := range []struct{ method, pattern, want string }{
		{"GET", "users", "dwell: invalid route pattern GET users: a pattern must begin with '/'"},
		{"GET", "", "dwell: invalid route pattern GET : a pattern must begin with '/'"},
		{"GET", "/users/:", "needs a name"},
		{"GET", "/users/:id:x", "only one parameter or catch-all"},
		{"GET", "/users/:id*x", "only one parameter or catch-all"},
		{"GET", "/files/*", "needs a name"},
		{"GET", "/files/*path/x", "catch-all (*path) must end the pattern"},
		{"GET", "/files*path", "catch-all (*path) must follow a '/'"},
		{"G T", "/x", "dwell: invalid method in route G T /x"},
		{"", "/x", "dwell: invalid method"},
	} {
		r := New()
		msg := catchPanic(func() { r.Handle(tc.method, tc.pattern, nop) })
		if !strings.Contains(msg, tc.want) {
			t.Errorf("%q %q: panic %q, want %q", tc.method, tc.pattern, msg, tc.want)
		}
	}
	r := New()
	if msg := catchPanic(func() { r.GET("/x", nil) }); msg != "dwell: nil handler for route GET /x" {
		t.Errorf("nil handler: panic %q", msg)
	}
	if msg := catchPanic(func() { r.Group("api") }); !strings.Contains(msg, "dwell: invalid group prefix") {
		t.Errorf("group prefix: panic %q", msg)
	}
	if msg := catchPanic(func() { r.Use(nil) }); msg != "dwell: nil middleware" {
		t.Errorf("nil middleware: panic %q", msg)
	}
}

// TestRoutesAfterConflict: a router whose registration panicked (and was recovered, as in
// tests) still routes what was registered before, and accepts further routes.
func TestRoutesAfterConflict(t *testing.T) {
	r := New()
	r.GET("/users/:id", reply("user"))
	r.GET("/users/:id/posts", reply("posts"))
	r.GET("/static/*path", reply("static"))
	for _, p := range []string{"/users/new", "/users/:name/x", "/static/css", "/users/:id", "/x/:"} {
		if catchPanic(func() { r.GET(p, nop) }) == "" {
			t.Fatalf("GET %s: no panic", p)
		}
	}
	r.GET("/other", reply("other"))
	cl := dial(t, serve(t, r))
	for target, want := range map[string]string{
		"/users/new":       "user id=new",
		"/users/7/posts":   "posts id=7",
		"/static/css/a.cs": "static path=/css/a.cs",
		"/other":           "other",
	} {
		if resp, body := cl.do("GET", target); resp.StatusCode != 200 || body != want {
			t.Errorf("GET %s: %d %q, want %q", target, resp.StatusCode, body, want)
		}
	}
}
