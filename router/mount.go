package router

import (
	"net/http"
	"strings"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/nethttp"
)

// HandleHTTP registers the net/http handler h for method and pattern, served through
// nethttp.Handler: r.HandleHTTP("GET", "/debug/vars", expvar.Handler()). The route's
// parameters are the request's path values (r.PathValue("id") for "/users/:id").
func (r *Router) HandleHTTP(method, pattern string, h http.Handler) {
	r.Handle(method, pattern, nethttp.Handler(h))
}

// HandleHTTP is Router.HandleHTTP for the group: pattern follows the group's prefix.
func (g *Group) HandleHTTP(method, pattern string, h http.Handler) {
	g.Handle(method, pattern, nethttp.Handler(h))
}

// Mount serves the whole subtree at prefix with the net/http handler h (through
// nethttp.Handler): the path prefix itself
// and every path under it, for every method in mountMethods (HEAD through GET). h sees the
// request's full path, as it would mounted on an http.ServeMux; wrap it in http.StripPrefix to
// take the prefix away:
//
//	r.Mount("/debug/pprof", mux)                                    // mux sees /debug/pprof/heap
//	r.Mount("/static", http.StripPrefix("/static", fileServer))    // fileServer sees /app.css
//
// A trailing '/' of prefix is dropped. The subtree's routes are the catch-all
// "prefix/*", so no other route may be registered under prefix (see the package's conflicts).
// A method outside mountMethods (WebDAV's, say) needs HandleHTTP.
func (r *Router) Mount(prefix string, h http.Handler) {
	mount(r.Handle, prefix, h)
}

// Mount is Router.Mount for the group: prefix follows the group's prefix. Mount("/") serves
// everything under the group's prefix, but not the prefix itself without its trailing slash,
// which the router then redirects to it.
func (g *Group) Mount(prefix string, h http.Handler) {
	mount(g.Handle, prefix, h)
}

// mountParam names the catch-all parameter of a mounted subtree. It is the router's own, so
// it is left out of the request's path values.
const mountParam = "dwellMountedPath"

// mountMethods are the methods a mounted subtree answers: those of RFC 9110 and PATCH, but
// CONNECT, which targets no path; HEAD requests use the GET routes.
var mountMethods = []string{
	http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch,
	http.MethodDelete, http.MethodOptions, http.MethodTrace,
}

func mount(handle func(method, pattern string, h core.Handler), prefix string, h http.Handler) {
	if h == nil {
		panic("dwell: nil http.Handler mounted at " + prefix)
	}
	if prefix == "" || prefix[0] != '/' {
		panic("dwell: invalid mount prefix " + prefix + ": a prefix must begin with '/'")
	}
	prefix = strings.TrimRight(prefix, "/")
	bridged := nethttp.Handler(h)
	for _, m := range mountMethods {
		if prefix != "" {
			handle(m, prefix, bridged)
		}
		handle(m, prefix+"/*"+mountParam, bridged)
	}
}
