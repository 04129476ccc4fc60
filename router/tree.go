package router

import (
	"net/http"

	"github.com/dwellhttp/dwell/core"
	"github.com/julienschmidt/httprouter"
)

// The routes with parameters live in httprouter's radix tree, reached only through Handle (to
// insert) and Lookup (to find). The tree stores an httprouter.Handle per route, a func of
// net/http types: each route's handle takes the request's Ctx out of its http.ResponseWriter
// parameter and runs the route's handler. Nothing but this package ever calls them, and the
// tree is never served through httprouter's ServeHTTP, so httprouter stays an implementation
// detail that can be swapped out.

// handle returns rt's handle in the tree. The handler runs from it, above it: a handle is a
// func that returns nothing, so it cannot hand the handler back instead. Its frame is what a
// route with parameters adds under its handler's; TestStackRoom measures it.
func (rt *route) handle() httprouter.Handle {
	return func(w http.ResponseWriter, _ *http.Request, _ httprouter.Params) {
		c := (*core.Ctx)(w.(*ctxCarrier))
		c.Seam().SetRoute(rt.route)
		rt.final(c)
	}
}

// A ctxCarrier is a *core.Ctx on its way through a handle's http.ResponseWriter parameter.
// Being a pointer, it fits in the interface without an allocation, which a struct holding the
// Ctx would not. Its methods are there for the interface alone: the handles take the Ctx back
// out at once, and nothing else receives a carrier.
type ctxCarrier core.Ctx

func (*ctxCarrier) Header() http.Header       { panic(errCarrier) }
func (*ctxCarrier) Write([]byte) (int, error) { panic(errCarrier) }
func (*ctxCarrier) WriteHeader(int)           { panic(errCarrier) }

const errCarrier = "dwell: internal error: the router's Ctx carrier used as an http.ResponseWriter"
