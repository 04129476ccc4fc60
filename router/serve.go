package router

import (
	"errors"
	"slices"
	"strings"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/internal/alias"
	"github.com/julienschmidt/httprouter"
)

// find is lookup for the request c. It is kept out of line, so that its frame, where the
// method's string is made, is gone by the time the handler runs.
//
//go:noinline
func (r *Router) find(c *core.Ctx) (core.Handler, httprouter.Handle) {
	// The method and path are borrowed, not copied: the router only reads them, and the
	// parameters it hands the handler are substrings of the path, in the request's memory.
	method, path := requestRoute(c)
	return r.lookup(c, method, path)
}

// requestRoute returns the request's method and decoded path, borrowed rather than copied:
// the router only reads them, and the parameters it hands the handler are substrings of the
// path, in the request's memory.
func requestRoute(c *core.Ctx) (method, path string) {
	return alias.String(c.Bytes().Method()), alias.String(c.Bytes().Path())
}

// lookup finds what serves method and path: the handler of a route without parameters, or the
// tree handle of a route with some, whose parameters it sets on c; neither when no route
// matches. The request's own method is tried first (then GET's routes for a HEAD request, then
// the Any routes), and within each, the routes without parameters before the tree. A hit
// allocates nothing for a static route, and only httprouter's Params slice for a route with
// parameters: the values are substrings of path, which lives in the request's own memory
// until the handler returns.
func (r *Router) lookup(c *core.Ctx, method, path string) (core.Handler, httprouter.Handle) {
	statics := r.static[path]
	rt, th, ps := r.match(statics, method, path)
	if rt == nil && th == nil && method == "HEAD" {
		rt, th, ps = r.match(statics, "GET", path)
	}
	if rt == nil && th == nil {
		rt, th, ps = r.match(statics, anyMethod, path)
	}
	switch {
	case th != nil: // the handle records its route itself (route.handle)
		if n := len(ps); n > 0 && ps[n-1].Key == mountParam {
			// A mounted subtree's catch-all is the mount's own, not one of the request's
			// path values.
			ps = ps[:n-1]
		}
		c.Seam().SetParams(asParams(ps))
	case rt != nil:
		c.Seam().SetRoute(rt.route)
		return rt.final, nil
	}
	return nil, th
}

// match returns what serves path among the routes of key: a static route (statics holds those
// of path), or the handle and parameters of a tree route.
func (r *Router) match(statics []*route, key, path string) (*route, httprouter.Handle, httprouter.Params) {
	for _, rt := range statics {
		if rt.key == key {
			return rt, nil, nil
		}
	}
	th, ps, _ := r.tree.Lookup(key, path)
	return nil, th, ps
}

// asParams views httprouter's parameters as the Ctx's without copying them: the two element
// types have the same fields (the conversion below proves it at compile time), and the slice
// is the one httprouter made for this request alone.
func asParams(ps httprouter.Params) []core.Param {
	return alias.Slice[core.Param](ps)
}

var _ = core.Param(httprouter.Param{})

// has reports whether a route of key (a method, or anyMethod) matches path, and whether one
// matches it with the trailing slash toggled (only reported when none matches as is).
func (r *Router) has(key, path string) (hit, tsr bool) {
	for _, rt := range r.static[path] {
		if rt.key == key {
			return true, false
		}
	}
	th, _, tsr := r.tree.Lookup(key, path)
	if th != nil {
		return true, false
	}
	for _, rt := range r.static[toggleSlash(path)] {
		tsr = tsr || rt.key == key
	}
	return false, tsr
}

// matches reports whether a request with method and path would reach a route, as lookup finds
// one, and whether one would match the path with its trailing slash toggled.
func (r *Router) matches(method, path string) (hit, tsr bool) {
	for _, key := range routeKeys(method) {
		h, t := r.has(key, path)
		if h {
			return true, false
		}
		tsr = tsr || t
	}
	return false, tsr
}

// handleMiss answers a request no route matched, as labelMiss has labelled it (in
// httprouter's order: a redirect to a path that does match, the automatic OPTIONS reply, 405,
// and last 404). The answer's details — the redirect's target, the Allow header — are worked
// out again here, which only those answers pay for.
func (r *Router) handleMiss(c *core.Ctx) {
	method, path := c.Method(), c.Path()
	switch c.Seam().RouteLabel() {
	case LabelRedirect:
		if to, code := r.redirectTarget(c, method, path); code != 0 {
			sendRedirect(c, to, code)
			return
		}
	case LabelOptions:
		if allow := r.allowed(path, method); allow != "" {
			c.SetHeader("Allow", allow)
			if r.GlobalOPTIONS != nil {
				r.GlobalOPTIONS(c)
			}
			return
		}
	case LabelMethodNotAllowed:
		if allow := r.allowed(path, method); allow != "" {
			c.SetHeader("Allow", allow)
			switch {
			case r.MethodNotAllowed != nil:
				r.MethodNotAllowed(c)
			case !c.Refuse(405, ErrMethodNotAllowed): // the server's WriteRefusal has none
				plainError(c, 405, "405 method not allowed\n")
			}
			return
		}
	}
	switch {
	case r.NotFound != nil:
		r.NotFound(c)
	case !c.Refuse(404, ErrNotFound): // the server's WriteRefusal has none
		plainError(c, 404, "404 page not found\n")
	}
}

// The errors of the router's own 404 and 405, which the server's WriteRefusal is given
// (core.Refusal.Err) when the application has set one and no NotFound or MethodNotAllowed of
// its own: middleware.JSONRefusal writes them as {"error":"page not found"} and
// {"error":"method not allowed"}.
var (
	ErrNotFound         = errors.New("dwell: page not found")
	ErrMethodNotAllowed = errors.New("dwell: method not allowed")
)

// allowed returns the Allow header for path: the methods, other than reqMethod, with a route
// that matches it, HEAD wherever GET is, and OPTIONS where it is answered; "" when there are
// none. Any routes are not counted: a path they match is served, never answered 405. For "*"
// (an "OPTIONS *" request) it lists every registered method, and once an Any route is
// registered, every standard method that can carry a path (CONNECT's target is an authority).
func (r *Router) allowed(path, reqMethod string) string {
	var list []string
	options := r.HandleOPTIONS
	add := func(m string) {
		if m == "OPTIONS" {
			options = true
		} else if !slices.Contains(list, m) {
			list = append(list, m)
		}
	}
	for _, m := range r.methods {
		if path != "*" {
			if m == reqMethod {
				continue
			}
			if hit, _ := r.has(m, path); !hit {
				continue
			}
		}
		add(m)
	}
	if path == "*" && r.byKey[anyMethod] != nil {
		for _, m := range anyAllows {
			add(m)
		}
	}
	if slices.Contains(list, "GET") && !slices.Contains(list, "HEAD") && reqMethod != "HEAD" {
		list = append(list, "HEAD")
	}
	if len(list) == 0 {
		return ""
	}
	if options {
		list = append(list, "OPTIONS")
	}
	slices.Sort(list)
	return strings.Join(list, ", ")
}

// anyAllows are the methods "OPTIONS *" lists once an Any route is registered: the standard
// methods (RFC 9110 §9 and PATCH), but CONNECT, whose target never matches a pattern.
var anyAllows = [...]string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE"}

// plainError writes a short text reply, as net/http's Error does.
func plainError(c *core.Ctx, code int, body string) {
	c.SetHeader("Content-Type", "text/plain; charset=utf-8")
	c.SetHeader("X-Content-Type-Options", "nosniff")
	c.SetStatus(code)
	c.WriteString(body)
}
