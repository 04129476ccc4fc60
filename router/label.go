package router

import (
	"github.com/dwellhttp/dwell/core"
)

// The route labels of the router's own answers, which Seam.RouteLabel returns for a request no
// route matched. Ctx.Route returns "" for them, as OpenTelemetry's http.route is left unset for
// a request no route matched; metrics, which count every request under some label, tell them
// apart by these, which no pattern can be (a pattern starts with '/'). The router's middleware
// (Router.Use) runs around its own answers as around a route, the label already set.
const (
	// LabelRedirect labels the redirects of RedirectTrailingSlash and RedirectFixedPath.
	LabelRedirect = "(redirect)"
	// LabelOptions labels the automatic OPTIONS replies (HandleOPTIONS, GlobalOPTIONS).
	LabelOptions = "(options)"
	// LabelMethodNotAllowed labels the 405s (HandleMethodNotAllowed, MethodNotAllowed).
	LabelMethodNotAllowed = "(method not allowed)"
	// LabelNotFound labels the 404s, and whatever NotFound answers.
	LabelNotFound = "(not found)"
)

// The labels as Routes, which a request records as it records a route's.
var (
	routeRedirect         = core.NewRoute(LabelRedirect)
	routeOptions          = core.NewRoute(LabelOptions)
	routeMethodNotAllowed = core.NewRoute(LabelMethodNotAllowed)
	routeNotFound         = core.NewRoute(LabelNotFound)
)

// labelMiss records on c which of the router's answers its request, which no route matched,
// gets — in handleMiss's order: a redirect, the automatic OPTIONS reply, 405, and last 404 —
// before the router's middleware runs. It is kept out of line, as find is.
//
//go:noinline
func (r *Router) labelMiss(c *core.Ctx) {
	method, path := requestRoute(c)
	c.Seam().SetRoute(r.missRoute(c, method, path))
}

// missRoute returns the Route of the answer to c, a request of method and path that no route
// matches.
func (r *Router) missRoute(c *core.Ctx, method, path string) *core.Route {
	if _, code := r.redirectTarget(c, method, path); code != 0 {
		return routeRedirect
	}
	if method == "OPTIONS" && r.HandleOPTIONS {
		if r.allowed(path, method) != "" {
			return routeOptions
		}
	} else if r.HandleMethodNotAllowed && r.allowed(path, method) != "" {
		return routeMethodNotAllowed
	}
	return routeNotFound
}
