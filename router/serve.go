package router

import (
	"slices"
	"strings"
	"unsafe"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/internal/ctxhook"
	"github.com/julienschmidt/httprouter"
)

// dispatch runs the route that matches method and path, with its parameters set on c, and
// reports false when there is none. The hit path allocates nothing for a static route, and
// only httprouter's Params slice for a route with parameters: the values are substrings of
// path, which lives in the request's own memory until the handler returns.
func (r *Router) dispatch(c *core.Ctx, method, path string) bool {
	m, ps, _ := r.tree.Lookup(method, path)
	if m == nil {
		if method != "HEAD" {
			return false
		}
		if m, ps, _ = r.tree.Lookup("GET", path); m == nil {
			return false
		}
	}
	h := r.byKey.get(markerKey(m))
	if len(ps) > 0 {
		ctxhook.SetParams(c, asParams(ps))
	}
	h(c)
	return true
}

// asParams views httprouter's parameters as the Ctx's without copying them: the two element
// types have the same fields (the conversion below proves it at compile time), and the slice
// is the one httprouter made for this request alone.
func asParams(ps httprouter.Params) []ctxhook.Param {
	return unsafe.Slice((*ctxhook.Param)(unsafe.Pointer(unsafe.SliceData(ps))), len(ps))
}

var _ = ctxhook.Param(httprouter.Param{})

// matches reports whether method and path would reach a route, and whether the tree
// suggests the path with its trailing slash toggled.
func (r *Router) matches(method, path string) (hit, tsr bool) {
	m, _, tsr := r.tree.Lookup(method, path)
	if m == nil && method == "HEAD" {
		var tsr2 bool
		m, _, tsr2 = r.tree.Lookup("GET", path)
		tsr = tsr || tsr2
	}
	return m != nil, tsr
}

// handleMiss answers a request no route matched, in httprouter's order: a redirect to a path
// that does match, the automatic OPTIONS reply, 405, and last 404.
func (r *Router) handleMiss(c *core.Ctx) {
	method, path := c.Method(), c.Path()
	if r.redirect(c, method, path) {
		return
	}
	if method == "OPTIONS" && r.HandleOPTIONS {
		if allow := r.allowed(path, method); allow != "" {
			c.SetHeader("Allow", allow)
			if r.GlobalOPTIONS != nil {
				r.GlobalOPTIONS(c)
			}
			return
		}
	} else if r.HandleMethodNotAllowed {
		if allow := r.allowed(path, method); allow != "" {
			c.SetHeader("Allow", allow)
			if r.MethodNotAllowed != nil {
				r.MethodNotAllowed(c)
			} else {
				plainError(c, 405, "405 method not allowed\n")
			}
			return
		}
	}
	if r.NotFound != nil {
		r.NotFound(c)
	} else {
		plainError(c, 404, "404 page not found\n")
	}
}

// allowed returns the Allow header for path: the methods, other than reqMethod, with a route
// that matches it ("*": every registered method), HEAD wherever GET is, and OPTIONS where it is
// answered; "" when there are none.
func (r *Router) allowed(path, reqMethod string) string {
	var list []string
	options := r.HandleOPTIONS
	for _, m := range r.methods {
		if path != "*" {
			if m == reqMethod {
				continue
			}
			if hit, _ := r.matches(m, path); !hit {
				continue
			}
		}
		if m == "OPTIONS" {
			options = true
			continue
		}
		list = append(list, m)
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

// plainError writes a short text reply, as net/http's Error does.
func plainError(c *core.Ctx, code int, body string) {
	c.SetHeader("Content-Type", "text/plain; charset=utf-8")
	c.SetHeader("X-Content-Type-Options", "nosniff")
	c.SetStatus(code)
	c.WriteString(body)
}
