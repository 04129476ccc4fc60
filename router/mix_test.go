package router

import (
	"strings"
	"testing"

	"github.com/dwellhttp/dwell/core"
)

// The tests of routes without parameters beside routes with some (static routes in their
// table, the others in httprouter's tree), in the manner of httprouter's tree tests: a table
// of routes registered one after another, each expected to register or to panic with a route
// conflict, then a table of requests and the route each must reach.

// mixRoutes are registered in order; conflict says the route must panic, and then it is not
// registered.
var mixRoutes = []struct {
	spec     string // see register
	conflict bool
}{
	{"GET /todos", false},
	{"GET /todos/:id", false},
	{"GET /todos/changes", false}, // static beside a parameter
	{"GET /todos/events", false},
	{"GET /todos/:id/attachment", false},
	{"GET /todos/changes/since", false}, // static below a static beside a parameter
	{"GET /todos/:id/", false},
	{"GET /todos/:todo/x", true},        // another name at the parameter's position
	{"GET /todos/changes/:since", true}, // a fixed segment beside :id, in a route with a parameter
	{"GET /todos/*rest", true},          // a catch-all beside a parameter
	{"GET /static/*path", false},
	{"GET /static/app.css", false}, // static beside a catch-all
	{"GET /static/", false},        // static at the catch-all's own root
	{"GET /static/:file", true},
	{"GET /static/css/:file", true},
	{"GET /users/new", false}, // static first, then the parameter beside it
	{"GET /users/:id", false},
	{"GET /users/:id", true}, // twice
	{"GET /users/new", true}, // twice
	{"POST /users/new/:x", false},
	{"ANY /users/:name", false}, // Any routes have a table of their own
	{"ANY /users/:id/x", true},
	{"GET /v:version/docs", false},
	{"GET /vendor", false},
}

// mixRouter registers mixRoutes, each with the handler named after it by handler.
func mixRouter(t *testing.T, handler func(name string) core.Handler) *Router {
	t.Helper()
	r := New()
	for _, rt := range mixRoutes {
		msg := catchPanic(func() { register(r, rt.spec, handler(rt.spec)) })
		switch {
		case rt.conflict && !strings.HasPrefix(msg, "dwell: route conflict: "):
			t.Errorf("%s: panic %q, want a route conflict", rt.spec, msg)
		case !rt.conflict && msg != "":
			t.Errorf("%s: unexpected panic: %s", rt.spec, msg)
		}
	}
	return r
}

// TestStaticBesideParam: a static route wins over a parameter or catch-all at the same position,
// for its own path only; every other path still reaches the parameter.
func TestStaticBesideParam(t *testing.T) {
	var got string
	r := mixRouter(t, func(name string) core.Handler {
		return func(c *core.Ctx) {
			got = name
			for k, v := range c.Params() {
				got += " " + k + "=" + v
			}
		}
	})
	r.Handler()
	for _, tc := range []struct{ method, path, want string }{
		{"GET", "/todos", "GET /todos"},
		{"GET", "/todos/changes", "GET /todos/changes"},
		{"GET", "/todos/events", "GET /todos/events"},
		{"GET", "/todos/7", "GET /todos/:id id=7"},
		{"GET", "/todos/change", "GET /todos/:id id=change"},
		{"GET", "/todos/changesx", "GET /todos/:id id=changesx"},
		{"GET", "/todos/changes/since", "GET /todos/changes/since"},
		{"GET", "/todos/changes/attachment", "GET /todos/:id/attachment id=changes"},
		{"GET", "/todos/changes/", "GET /todos/:id/ id=changes"},
		{"GET", "/todos/7/attachment", "GET /todos/:id/attachment id=7"},
		{"HEAD", "/todos/changes", "GET /todos/changes"},
		{"HEAD", "/todos/7", "GET /todos/:id id=7"},
		{"GET", "/static/app.css", "GET /static/app.css"},
		{"GET", "/static/app.js", "GET /static/*path path=/app.js"},
		{"GET", "/static/app.css/x", "GET /static/*path path=/app.css/x"},
		{"GET", "/static/", "GET /static/"},
		{"GET", "/static/css/a.css", "GET /static/*path path=/css/a.css"},
		{"GET", "/users/new", "GET /users/new"},
		{"GET", "/users/newer", "GET /users/:id id=newer"},
		{"GET", "/users/7", "GET /users/:id id=7"},
		{"POST", "/users/new/1", "POST /users/new/:x x=1"},
		{"POST", "/users/new", "ANY /users/:name name=new"}, // the method's own routes first
		{"DELETE", "/users/7", "ANY /users/:name name=7"},
		{"GET", "/vendor", "GET /vendor"},
		{"GET", "/v2/docs", "GET /v:version/docs version=2"},
		{"GET", "/todos/7/x", ""},
		{"GET", "/static", ""},
		{"PUT", "/todos/7", ""},
	} {
		var c core.Ctx
		got = ""
		hit := r.dispatch(&c, tc.method, tc.path)
		if hit != (tc.want != "") || got != tc.want {
			t.Errorf("%s %s: %v %q, want %q", tc.method, tc.path, hit, got, tc.want)
		}
	}
}

// TestMixedReplies: the 405 and its Allow header, the automatic OPTIONS reply, and both kinds of
// redirect count static routes exactly as routes with parameters.
func TestMixedReplies(t *testing.T) {
	r := New()
	r.GET("/todos/:id", reply("todo"))
	r.PUT("/todos/:id", reply("put"))
	r.GET("/todos/changes", reply("changes"))
	r.POST("/todos/search", reply("search"))
	r.GET("/docs/", reply("docs"))
	r.GET("/docs/:page", reply("page"))
	r.GET("/files/*path", reply("files"))
	r.DELETE("/files/tmp", reply("delete tmp"))
	cl := dial(t, serve(t, r))
	for _, tc := range []struct {
		name, method, target string
		code                 int
		body                 string
		header, value        string
	}{
		{"static", "GET", "/todos/changes", 200, "changes", "", ""},
		{"HEAD falls back to a static GET", "HEAD", "/todos/changes", 200, "", "Content-Length", "7"},
		{"405 at a static path", "DELETE", "/todos/changes", 405, "405 method not allowed\n", "Allow", "GET, HEAD, OPTIONS, PUT"},
		{"405 counts a static route of another method", "DELETE", "/todos/search", 405, "405 method not allowed\n", "Allow", "GET, HEAD, OPTIONS, POST, PUT"},
		{"405 at a parameter's path", "DELETE", "/todos/7", 405, "405 method not allowed\n", "Allow", "GET, HEAD, OPTIONS, PUT"},
		{"405 beside a catch-all", "POST", "/files/tmp", 405, "405 method not allowed\n", "Allow", "DELETE, GET, HEAD, OPTIONS"},
		{"OPTIONS mixed", "OPTIONS", "/todos/search", 200, "", "Allow", "GET, HEAD, OPTIONS, POST, PUT"},
		{"OPTIONS *", "OPTIONS", "*", 200, "", "Allow", "DELETE, GET, HEAD, OPTIONS, POST, PUT"},
		{"method first: PUT reaches the parameter", "PUT", "/todos/changes", 200, "put id=changes", "", ""},
		{"slash removed to a static route", "GET", "/todos/changes/", 301, "", "Location", "/todos/changes"},
		{"slash removed to a parameter", "GET", "/todos/7/", 301, "", "Location", "/todos/7"},
		{"slash removed, POST", "POST", "/todos/search/", 308, "", "Location", "/todos/search"},
		{"slash added to a static beside a parameter", "GET", "/docs", 301, "", "Location", "/docs/"},
		{"fixed case prefers the static route", "GET", "/TODOS/CHANGES", 301, "", "Location", "/todos/changes"},
		{"fixed case to a parameter", "GET", "/TODOS/Seven", 301, "", "Location", "/todos/Seven"},
		{"fixed case, POST static", "POST", "/Todos/Search", 308, "", "Location", "/todos/search"},
		{"fixed case and slash, static", "GET", "/Todos/Changes/", 301, "", "Location", "/todos/changes"},
		{"fixed dot-dot to a static route", "GET", "/todos/7/../changes", 301, "", "Location", "/todos/changes"},
		{"fixed static beside a catch-all", "DELETE", "/FILES/TMP", 308, "", "Location", "/files/tmp"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := cl.do(tc.method, tc.target)
			if resp.StatusCode != tc.code || body != tc.body {
				t.Errorf("%s %s: %d %q, want %d %q", tc.method, tc.target, resp.StatusCode, body, tc.code, tc.body)
			}
			if tc.header != "" {
				if got := resp.Header.Get(tc.header); got != tc.value {
					t.Errorf("%s %s: %s %q, want %q", tc.method, tc.target, tc.header, got, tc.value)
				}
			}
		})
	}
}
