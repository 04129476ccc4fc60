package router

import (
	"slices"

	"github.com/dwellhttp/dwell/core"
	"github.com/julienschmidt/httprouter"
)

// A Router sends each request to the handler registered for its method and path. Register
// routes and middleware at start-up, then serve Handler(); set the fields before calling
// Handler, since the server's loops read them while serving.
//
// The zero Router routes, with every automatic reply and redirect off; New turns them on.
type Router struct {
	// NotFound serves requests that match no route, once no redirect or automatic reply
	// applies. Nil means the server's refusal format when the server has one
	// (core.Options.WriteRefusal, given a 404 with ErrNotFound: middleware.JSONRefusal's
	// {"error":"page not found"}), and a plain "404 page not found" otherwise.
	NotFound core.Handler

	// MethodNotAllowed serves a request whose path matches routes of other methods only,
	// when HandleMethodNotAllowed is set; the Allow header lists those methods before it runs.
	// Nil means the server's refusal format when the server has one (a 405 with
	// ErrMethodNotAllowed, the Allow header kept), and a plain "405 method not allowed"
	// otherwise.
	MethodNotAllowed core.Handler

	// GlobalOPTIONS runs for automatic OPTIONS replies (see HandleOPTIONS), after the Allow
	// header is set: the place for a CORS preflight reply, say. Nil means an empty 200 reply.
	GlobalOPTIONS core.Handler

	// HandleMethodNotAllowed answers 405 with an Allow header, instead of 404, when the path
	// matches routes of other methods only. On in New.
	HandleMethodNotAllowed bool

	// HandleOPTIONS answers an OPTIONS request that no OPTIONS route (nor Any route) matches
	// with the methods the path allows, in an Allow header ("OPTIONS *" lists every registered
	// method, and the standard ones once an Any route is registered). On in New.
	HandleOPTIONS bool

	// RedirectTrailingSlash redirects a request that matches no route, but would with the
	// trailing slash added or removed: 301 for GET and HEAD, 308 (same method and body) for
	// others. On in New.
	RedirectTrailingSlash bool

	// RedirectFixedPath redirects a request that matches no route to the route that its
	// cleaned path (no "..", "." or doubled slashes) matches, case-insensitively, and with the
	// trailing slash fixed if RedirectTrailingSlash is set; the codes are those of
	// RedirectTrailingSlash. On in New. It costs a scan of the routes the method may reach,
	// but only for requests that would otherwise miss.
	RedirectFixedPath bool

	static  map[string][]*route // routes without parameters, by path; matched first
	tree    httprouter.Router   // routes with parameters: one radix tree per method key
	byKey   map[string][]*route // the routes of each method key: static first, each kind in registration order
	methods []string            // the registered methods, sorted (Any routes aside)
	routes  []*route            // in registration order
	root    Group               // the router's own middleware and routes
	handler core.Handler        // set by Handler: the router is then frozen
	miss    core.Handler        // handleMiss inside the router's middleware, run once labelMiss has labelled the request
}

// A route is one registered method and pattern.
type route struct {
	key, pattern string // key: the method, or anyMethod for an Any route
	h            core.Handler
	group        *Group
	final        core.Handler // h inside its middleware, built by Handler
	route        *core.Route  // the pattern, which the request records for Ctx.Route
	tokens       []token
	static       bool // no parameters: the route is in the static table, not in the tree
}

// anyMethod is the method key of the routes registered with Any: no request has an empty
// method, so no request looks it up as its own.
const anyMethod = ""

// name returns the route as its registration reads, for messages: "GET /users/:id", or
// "Any /files/*path".
func (rt *route) name() string {
	if rt.key == anyMethod {
		return "Any " + rt.pattern
	}
	return rt.key + " " + rt.pattern
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
			rt.route = core.NewRoute(rt.pattern)
		}
		r.miss = g.wrap(r.handleMiss)
		// The router as a core.Handler: a func literal, not a method value, which would add a
		// wrapper's frame under every handler. A parked handler keeps its coroutine's stack,
		// which is 2 KiB until a call goes deeper (see core's coroutines), so what sits under
		// the handler is kept small: the lookup is done and gone (find) before the handler
		// runs above this literal alone, or above it and its route's tree handle.
		r.handler = func(c *core.Ctx) {
			h, th := r.find(c)
			if th != nil {
				th((*ctxCarrier)(c), nil, nil)
				return
			}
			if h == nil {
				r.labelMiss(c)
				h = r.miss
			}
			h(c)
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

// add registers the route key pattern (key is a method, or anyMethod), or panics with a message
// that says how to fix it. Registration is start-up code, as for http.ServeMux: a mistake there
// should stop the program at once.
func (r *Router) add(key, pattern string, h core.Handler, g *Group) {
	rt := &route{key: key, pattern: pattern, h: h, group: g}
	switch {
	case r.handler != nil:
		panic("dwell: route " + rt.name() + " registered after Handler was called: register every route before serving")
	case h == nil:
		panic("dwell: nil handler for route " + rt.name())
	}
	if why := checkPattern(pattern); why != "" {
		panic("dwell: invalid route pattern " + rt.name() + ": " + why)
	}
	rt.tokens = parsePattern(pattern)
	rt.static = len(rt.tokens) == 1 && rt.tokens[0].kind == literal
	if rt.static {
		for _, old := range r.static[pattern] {
			if old.key == key {
				panic(r.conflictMessage(rt, ""))
			}
		}
		if r.static == nil {
			r.static = make(map[string][]*route)
		}
		r.static[pattern] = append(r.static[pattern], rt)
	} else if detail := insert(&r.tree, key, pattern, rt.handle()); detail != "" {
		// checkPattern knows httprouter's rules; should one slip past it, a tree of its own
		// tells an invalid pattern from a conflict.
		var alone httprouter.Router
		if insert(&alone, key, pattern, rt.handle()) != "" {
			panic("dwell: invalid route pattern " + rt.name() + ": " + detail)
		}
		panic(r.conflictMessage(rt, detail))
	}
	if r.byKey == nil {
		r.byKey = make(map[string][]*route)
	}
	r.routes = append(r.routes, rt)
	if _, ok := r.byKey[key]; !ok && key != anyMethod {
		r.methods = append(r.methods, key)
		slices.Sort(r.methods)
	}
	rs := r.byKey[key]
	i := len(rs)
	if rt.static {
		for i = 0; i < len(rs) && rs[i].static; i++ {
		}
	}
	r.byKey[key] = slices.Insert(rs, i, rt)
}

// insert adds a handle to the tree and returns httprouter's panic message, or "".
func insert(t *httprouter.Router, key, pattern string, th httprouter.Handle) (detail string) {
	defer func() {
		if v := recover(); v != nil {
			detail = panicText(v)
		}
	}()
	t.Handle(key, pattern, th)
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
