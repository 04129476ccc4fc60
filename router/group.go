package router

import (
	"strings"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/internal/syntax"
)

// A Group registers routes under a common path prefix, with middleware of its own that runs
// inside the middleware of its parents and of the Router. Create one with Router.Group or
// Group.Group.
type Group struct {
	r      *Router
	prefix string
	parent *Group
	mw     []func(core.Handler) core.Handler
}

// Group returns a group whose routes are registered under prefix, such as "/api/v1", with
// the router's middleware and the group's own. A prefix may hold parameters ("/users/:id");
// a trailing '/' is dropped, so "/api/" and "/api" are the same group. The group serves its
// prefix itself through the empty pattern: g.GET("", h) registers GET /api/v1.
func (r *Router) Group(prefix string) *Group { return r.group().Group(prefix) }

// Group returns a group nested in g: its prefix follows g's and its middleware runs inside g's.
func (g *Group) Group(prefix string) *Group {
	if prefix == "" || prefix[0] != '/' {
		panic("dwell: invalid group prefix " + prefix + ": a prefix must begin with '/'")
	}
	return &Group{r: g.r, prefix: g.prefix + strings.TrimSuffix(prefix, "/"), parent: g}
}

// Use adds middleware to every route of the router, whenever registered, and to the router's
// own replies: NotFound, MethodNotAllowed, the automatic OPTIONS replies and the redirects.
// The first middleware given to Use is the outermost: it runs first and sees the response
// last. Middleware runs in the handler's coroutine, so it may park (read a body, wait).
func (r *Router) Use(mw ...func(core.Handler) core.Handler) { r.group().Use(mw...) }

// Use adds middleware to the group's routes, whenever registered, and to those of its nested
// groups. It runs inside the middleware of the Router and of the parent groups; within the
// group, the first middleware given to Use is the outermost.
func (g *Group) Use(mw ...func(core.Handler) core.Handler) {
	if g.r.handler != nil {
		panic("dwell: middleware added after Handler was called: add middleware before serving")
	}
	for _, m := range mw {
		if m == nil {
			panic("dwell: nil middleware")
		}
	}
	g.mw = append(g.mw, mw...)
}

// wrap returns h inside the middleware of g and its parents, the root's first Use outermost.
func (g *Group) wrap(h core.Handler) core.Handler {
	for ; g != nil; g = g.parent {
		for i := len(g.mw) - 1; i >= 0; i-- {
			if h = g.mw[i](h); h == nil {
				panic("dwell: a middleware returned a nil handler")
			}
		}
	}
	return h
}

// Handle registers h for requests with method and a path that matches pattern, under the
// group's prefix: "/users/:id" matches one path segment as the parameter id, "/files/*path"
// matches everything after "/files" ('/' included) as path; handlers read them with c.Param.
// An empty pattern registers the group's prefix itself: Group("/todos").GET("", h) serves
// /todos, and GET("/", h) serves /todos/.
//
// A route without parameters may sit beside any other ("/users/new" beside "/users/:id"):
// it is matched first. Among routes with parameters, which share httprouter's tree, one that
// needs a fixed segment, another parameter name or a catch-all where another has a parameter
// or catch-all panics at once with a message beginning "dwell: route conflict:" that names
// both routes and the way out; an invalid pattern panics with "dwell: invalid route pattern".
func (g *Group) Handle(method, pattern string, h core.Handler) {
	if !syntax.IsToken(method) { // RFC 9110 §9.1: a method is a token
		panic("dwell: invalid method in route " + method + " " + g.prefix + pattern + ": a method is a token such as GET")
	}
	g.add(method, pattern, h)
}

// Any registers h for requests of every method with a path that matches pattern, under the
// group's prefix: the standard methods (GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS, TRACE;
// CONNECT carries no path) and extension methods such as PROPFIND alike. A route registered
// for the request's method, or GET's for a HEAD request, is matched first, whatever its
// pattern; an Any route then serves the rest. So a path an Any route matches never gets 405,
// and its OPTIONS requests reach h instead of the automatic reply; an OPTIONS route beside
// it takes them back. Any routes conflict only among themselves, as Handle says.
func (g *Group) Any(pattern string, h core.Handler) { g.add(anyMethod, pattern, h) }

// add registers h for the method key and pattern under the group's prefix.
func (g *Group) add(key, pattern string, h core.Handler) {
	full := g.prefix + pattern
	if pattern != "" && pattern[0] != '/' && g.prefix != "" {
		rt := route{key: key, pattern: full}
		panic("dwell: invalid route pattern " + rt.name() + ": a pattern in a group must begin with '/', or be empty for the group's own prefix")
	}
	g.r.add(key, full, h, g)
}

// GET registers h for GET requests; HEAD requests use it too unless a HEAD route matches.
func (g *Group) GET(pattern string, h core.Handler) { g.Handle("GET", pattern, h) }

// HEAD registers h for HEAD requests.
func (g *Group) HEAD(pattern string, h core.Handler) { g.Handle("HEAD", pattern, h) }

// POST registers h for POST requests.
func (g *Group) POST(pattern string, h core.Handler) { g.Handle("POST", pattern, h) }

// PUT registers h for PUT requests.
func (g *Group) PUT(pattern string, h core.Handler) { g.Handle("PUT", pattern, h) }

// PATCH registers h for PATCH requests.
func (g *Group) PATCH(pattern string, h core.Handler) { g.Handle("PATCH", pattern, h) }

// DELETE registers h for DELETE requests.
func (g *Group) DELETE(pattern string, h core.Handler) { g.Handle("DELETE", pattern, h) }

// OPTIONS registers h for OPTIONS requests, in place of the automatic reply.
func (g *Group) OPTIONS(pattern string, h core.Handler) { g.Handle("OPTIONS", pattern, h) }

// Handle registers h for requests with method and a path that matches pattern; see
// Group.Handle for patterns and for what a conflict does.
func (r *Router) Handle(method, pattern string, h core.Handler) { r.group().Handle(method, pattern, h) }

// GET registers h for GET requests; HEAD requests use it too unless a HEAD route matches.
func (r *Router) GET(pattern string, h core.Handler) { r.group().Handle("GET", pattern, h) }

// HEAD registers h for HEAD requests.
func (r *Router) HEAD(pattern string, h core.Handler) { r.group().Handle("HEAD", pattern, h) }

// POST registers h for POST requests.
func (r *Router) POST(pattern string, h core.Handler) { r.group().Handle("POST", pattern, h) }

// PUT registers h for PUT requests.
func (r *Router) PUT(pattern string, h core.Handler) { r.group().Handle("PUT", pattern, h) }

// PATCH registers h for PATCH requests.
func (r *Router) PATCH(pattern string, h core.Handler) { r.group().Handle("PATCH", pattern, h) }

// DELETE registers h for DELETE requests.
func (r *Router) DELETE(pattern string, h core.Handler) { r.group().Handle("DELETE", pattern, h) }

// Any registers h for requests of every method; see Group.Any.
func (r *Router) Any(pattern string, h core.Handler) { r.group().Any(pattern, h) }

// OPTIONS registers h for OPTIONS requests, in place of the automatic reply.
func (r *Router) OPTIONS(pattern string, h core.Handler) { r.group().Handle("OPTIONS", pattern, h) }
