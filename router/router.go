package router

import (
	"slices"
	"unsafe"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/internal/ctxhook"
	"github.com/julienschmidt/httprouter"
)

// A Router sends each request to the handler registered for its method and path. Register
// routes and middleware at start-up, then serve Handler(); set the fields before calling
// Handler, since the server's loops read them while serving.
//
// The zero Router routes, with every automatic reply and redirect off; New turns them on.
type Router struct {
	// NotFound serves requests that match no route, once no redirect or automatic reply
	// applies. Nil means a plain "404 page not found".
	NotFound core.Handler

	// MethodNotAllowed serves a request whose path matches routes of other methods only,
	// when HandleMethodNotAllowed is set; the Allow header lists those methods before it runs.
	// Nil means a plain "405 method not allowed".
	MethodNotAllowed core.Handler

	// GlobalOPTIONS runs for automatic OPTIONS replies (see HandleOPTIONS), after the Allow
	// header is set: the place for a CORS preflight reply, say. Nil means an empty 200 reply.
	GlobalOPTIONS core.Handler

	// HandleMethodNotAllowed answers 405 with an Allow header, instead of 404, when the path
	// matches routes of other methods only. On in New.
	HandleMethodNotAllowed bool

	// HandleOPTIONS answers an OPTIONS request that no OPTIONS route matches with the
	// methods the path allows, in an Allow header ("OPTIONS *" lists every registered method).
	// On in New.
	HandleOPTIONS bool

	// RedirectTrailingSlash redirects a request that matches no route, but would with the
	// trailing slash added or removed: 301 for GET and HEAD, 308 (same method and body) for
	// others. On in New.
	RedirectTrailingSlash bool

	// RedirectFixedPath redirects a request that matches no route to the route that its
	// cleaned path (no "..", "." or doubled slashes) matches, case-insensitively, and with the
	// trailing slash fixed if RedirectTrailingSlash is set; the codes are those of
	// RedirectTrailingSlash. On in New. It costs a scan of the method's routes, but only for
	// requests that would otherwise miss.
	RedirectFixedPath bool

	tree    httprouter.Router   // the radix trees, one per method; holds markers
	byKey   keyTable            // marker closure address → final handler, built by Handler
	routes  []*route            // in registration order
	methods []string            // the registered methods, sorted
	root    Group               // the router's own middleware and routes
	handler core.Handler        // set by Handler: the router is then frozen
	miss    core.Handler        // handleMiss inside the router's middleware
	perMeth map[string][]*route // routes by method, for conflicts and fixed paths
}

// A route is one registered method and pattern.
type route struct {
	method, pattern string
	h               core.Handler
	group           *Group
	final           core.Handler // h inside its middleware, built by Handler
	tokens          []token
	key             unsafe.Pointer // the address of the route's marker in the tree
}

// New returns a Router with httprouter's defaults: HandleMethodNotAllowed, HandleOPTIONS,
// RedirectTrailingSlash and RedirectFixedPath on.
func New() *Router {
	return &Router{
		HandleMethodNotAllowed: true,
		HandleOPTIONS:          true,
		RedirectTrailingSlash:  true,
		RedirectFixedPath:      true,
	}
}

// Handler returns the router as a core.Handler, to pass to core.NewServer. The first call
// wraps every route in its middleware, once, so that a request pays for no wrapping; the router
// is frozen from then on: registering a route or middleware afterwards panics. Later calls
// return the same handler.
func (r *Router) Handler() core.Handler {
	if r.handler == nil {
		g := r.group()
		for _, rt := range r.routes {
			rt.final = rt.group.wrap(rt.h)
		}
		r.miss = g.wrap(r.handleMiss)
		r.byKey = newKeyTable(r.routes)
		// The router as a core.Handler: a func literal, not a method value, which would add a
		// wrapper's frame under every handler — and a parked handler's stack is small (see
		// core's coroutines).
		r.handler = func(c *core.Ctx) {
			// The path is borrowed, not copied: the router only reads it, and the parameters
			// it hands the handler are substrings of it, in the request's memory.
			if !r.dispatch(c, c.Method(), ctxhook.PathString(c)) {
				r.miss(c)
			}
		}
	}
	return r.handler
}

// group returns the router's root group, tying it to r on first use (the zero Router works).
func (r *Router) group() *Group {
	if r.root.r == nil {
		r.root.r = r
	}
	return &r.root
}

// add registers rt, or panics with a message that says how to fix it. Registration is start-up
// code, as for http.ServeMux: a mistake there should stop the program at once.
func (r *Router) add(method, pattern string, h core.Handler, g *Group) {
	name := method + " " + pattern
	switch {
	case r.handler != nil:
		panic("dwell: route " + name + " registered after Handler was called: register every route before serving")
	case !validMethod(method):
		panic("dwell: invalid method in route " + name + ": a method is a token such as GET")
	case h == nil:
		panic("dwell: nil handler for route " + name)
	}
	if why := checkPattern(pattern); why != "" {
		panic("dwell: invalid route pattern " + name + ": " + why)
	}
	rt := &route{method: method, pattern: pattern, h: h, group: g, tokens: parsePattern(pattern)}
	m := markerFor(rt)
	if detail := insert(&r.tree, method, pattern, m); detail != "" {
		// checkPattern knows httprouter's rules; should one slip past it, a tree of its own
		// tells an invalid pattern from a conflict.
		var alone httprouter.Router
		if insert(&alone, method, pattern, m) != "" {
			panic("dwell: invalid route pattern " + name + ": " + detail)
		}
		panic(r.conflictMessage(rt, detail))
	}
	rt.key = markerKey(m)
	if r.perMeth == nil {
		r.perMeth = make(map[string][]*route)
	}
	r.routes = append(r.routes, rt)
	if _, ok := r.perMeth[method]; !ok {
		r.methods = append(r.methods, method)
		slices.Sort(r.methods)
	}
	r.perMeth[method] = append(r.perMeth[method], rt)
}

// insert adds a marker to the tree and returns httprouter's panic message, or "".
func insert(t *httprouter.Router, method, pattern string, m httprouter.Handle) (detail string) {
	defer func() {
		if v := recover(); v != nil {
			detail = panicText(v)
		}
	}()
	t.Handle(method, pattern, m)
	return ""
}

func panicText(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case error:
		return v.Error()
	}
	return "httprouter refused the route"
}
