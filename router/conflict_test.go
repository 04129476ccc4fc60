package router

import (
	"strings"
	"testing"

	"github.com/dwellhttp/dwell/core"
)

func nop(*core.Ctx) {}

// register registers spec on r: "METHOD /pattern", "ANY /pattern" for Any, or either after
// "GROUP /prefix" to register in a group; the pattern "" stands for the empty one.
func register(r *Router, spec string, h core.Handler) {
	f := strings.Fields(spec)
	g := r.group()
	if f[0] == "GROUP" {
		g, f = r.Group(f[1]), f[2:]
	}
	if f[1] == `""` {
		f[1] = ""
	}
	if f[0] == "ANY" {
		g.Any(f[1], h)
	} else {
		g.Handle(f[0], f[1], h)
	}
}

// TestConflicts: routes with parameters that httprouter's tree cannot hold together, and a
// route registered twice, panic at registration with a dwell message naming both routes and
// the way out.
func TestConflicts(t *testing.T) {
	for _, tc := range []struct {
		name   string
		routes []string // see register; the last one conflicts
		want   []string // substrings of the panic message
	}{
		{"param names differ", []string{"GET /users/:id", "GET /users/:name/posts"}, []string{
			"dwell: route conflict: GET /users/:name/posts conflicts with GET /users/:id, registered earlier",
			"the parameters :name and :id sit at the same position (after /users/) under different names; use one name in both routes",
		}},
		{"param names differ, branches differ", []string{"GET /a/:x/b", "GET /a/:y/c"}, []string{
			"GET /a/:y/c conflicts with GET /a/:x/b", "the parameters :y and :x", "use one name",
		}},
		{"fixed segment of a route with params beside a param", []string{"GET /users/:id", "GET /users/new/:tab"}, []string{
			"dwell: route conflict: GET /users/new/:tab conflicts with GET /users/:id, registered earlier",
			`the fixed segment "new" and the parameter :id sit at the same position (after /users/)`,
			"only a route without parameters may do beside a parameter, and /users/new/:tab has :tab",
			"give /users/new/:tab a path that parts from the other before /users/",
			`c.Param("id") == "new"`,
		}},
		{"param beside a fixed segment of a route with params", []string{"GET /users/new/:tab", "GET /users/:id"}, []string{
			"GET /users/:id conflicts with GET /users/new/:tab",
			"/users/new/:tab has :tab; give /users/new/:tab a path that parts",
		}},
		{"params named in full", []string{"GET /r/:owner/:repo/:n", "GET /r/:owner/:repo/new/*rest"}, []string{
			"GET /r/:owner/:repo/new/*rest conflicts with GET /r/:owner/:repo/:n",
			"/r/:owner/:repo/new/*rest has :owner, :repo and *rest",
		}},
		{"picks the conflicting one", []string{"GET /a", "GET /users", "GET /users/list/:x", "POST /users/:id", "GET /users/:id"}, []string{
			"GET /users/:id conflicts with GET /users/list/:x",
		}},
		{"param beside a catch-all", []string{"GET /static/*path", "GET /static/:file"}, []string{
			"GET /static/:file conflicts with GET /static/*path",
			"the catch-all *path takes every path below /static/, where only routes without parameters may sit beside it, and /static/:file has :file",
			`c.Param("path")`,
		}},
		{"catch-all beside a param", []string{"GET /static/:file", "GET /static/*path"}, []string{
			"GET /static/*path conflicts with GET /static/:file", "move /static/:file to a path outside /static/",
		}},
		{"catch-all beside a deeper route with params", []string{"GET /static/*path", "GET /static/css/:file"}, []string{
			"GET /static/css/:file conflicts with GET /static/*path", "/static/css/:file has :file",
		}},
		{"catch-all at a route's segment root", []string{"GET /u/:a/", "GET /u/:a/*f"}, []string{
			"GET /u/:a/*f conflicts with GET /u/:a/",
			`the catch-all *f matches /u/:a/ itself (with f "/"); drop the route /u/:a/`,
		}},
		{"duplicate", []string{"GET /a/:b", "GET /a/:b"}, []string{
			"dwell: route conflict: GET /a/:b conflicts with GET /a/:b", "registered twice",
		}},
		{"duplicate static", []string{"GET /a", "POST /a", "GET /a"}, []string{
			"dwell: route conflict: GET /a conflicts with GET /a, registered earlier: the same route is registered twice; remove one of them",
		}},
		{"duplicate in a group", []string{"GET /api/x", "GROUP /api GET /x"}, []string{
			"GET /api/x conflicts with GET /api/x", "registered twice",
		}},
		{"duplicate group prefix", []string{"GET /todos", `GROUP /todos GET ""`}, []string{
			"GET /todos conflicts with GET /todos", "registered twice",
		}},
		{"duplicate Any", []string{"ANY /x", "GET /x", "ANY /x"}, []string{
			"dwell: route conflict: Any /x conflicts with Any /x", "registered twice",
		}},
		{"Any routes among themselves", []string{"ANY /f/:a", "GET /f/:b", "ANY /f/:b/x"}, []string{
			"Any /f/:b/x conflicts with Any /f/:a", "use one name",
		}},
		{"mid-segment parameter", []string{"GET /v:version/x", "GET /vendor/:id"}, []string{
			"dwell: route conflict: GET /vendor/:id conflicts with GET /v:version/x",
			"give one of them a prefix of its own",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := New()
			var msg string
			for i, spec := range tc.routes {
				msg = catchPanic(func() { register(r, spec, nop) })
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

// TestNoConflict: routes that register together without a panic: a route without parameters
// beside any other, routes of other methods, Any routes beside method routes, and what
// httprouter's tree holds itself.
func TestNoConflict(t *testing.T) {
	r := New()
	for _, spec := range []string{
		"GET /users/:id", "POST /users/new", // another method, another tree
		"GET /users/new", "GET /users/:id/posts", "GET /users/new/posts", "GET /users/:id/posts/:post",
		"GET /users", "GET /users/", "GET /files/*path", "GET /filesystem", "GET /files/a.txt",
		"GET /files/", "GET /src/", "GET /src/*filepath", "GET /v:version/x", "GET /vendor",
		"ANY /users/:name", "ANY /users/new", "ANY /files", `GROUP /files GET ""`,
		"PUT /:page/x", "PUT /users/x", "PUT /", // the root's parameter beside static routes
	} {
		if msg := catchPanic(func() { register(r, spec, nop) }); msg != "" {
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
		{"GET", "/files/*path/", "catch-all (*path) must end the pattern"},
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
	for _, p := range []string{"/users/new/:x", "/users/:name/x", "/static/:file", "/users/:id", "/x/:"} {
		if catchPanic(func() { r.GET(p, nop) }) == "" {
			t.Fatalf("GET %s: no panic", p)
		}
	}
	r.GET("/other", reply("other"))
	r.GET("/users/new", reply("new"))
	cl := dial(t, serve(t, r))
	for target, want := range map[string]string{
		"/users/new":       "new",
		"/users/new/x":     "404 page not found\n",
		"/users/7/posts":   "posts id=7",
		"/static/css/a.cs": "static path=/css/a.cs",
		"/other":           "other",
	} {
		if _, body := cl.do("GET", target); body != want {
			t.Errorf("GET %s: %q, want %q", target, body, want)
		}
	}
}
