package router

import (
	"unsafe"

	"github.com/julienschmidt/httprouter"
)

// The radix tree is httprouter's, reached only through Handle (to insert) and Lookup (to find).
// A tree stores an httprouter.Handle per route, a func of net/http types that dwell never calls:
// each route gets its own marker closure, and a lookup maps the marker it returns back to the
// route by the closure's address. So httprouter stays an implementation detail that can be
// swapped out, and this package needs no net/http.

// markerFor returns a distinct httprouter.Handle standing for rt in the tree.
func markerFor(rt *route) httprouter.Handle {
	return marker(httprouter.Handle(nil), rt)
}

// marker builds a closure of the same type as its first argument. The parameter types are
// inferred from httprouter.Handle, which spares this package from naming (importing) them.
func marker[W, R any](_ func(W, R, httprouter.Params), rt *route) func(W, R, httprouter.Params) {
	// The closure captures rt so that every call allocates a distinct closure: its address is
	// the route's key.
	return func(W, R, httprouter.Params) {
		panic("dwell: httprouter called the marker of route " + rt.method + " " + rt.pattern)
	}
}

// markerKey returns the address of a marker's closure: a func value is a pointer to it.
func markerKey(h httprouter.Handle) unsafe.Pointer {
	return *(*unsafe.Pointer)(unsafe.Pointer(&h))
}
