// Package ctxhook lets dwell's own packages reach the parts of a core.Ctx that are plumbing
// rather than handler API: a router sets route parameters, package wait detaches a request
// until a time has passed. Package core fills these variables in when it is initialised.
//
// The Ctx travels as an any: this package cannot name core.Ctx (core imports it), and a
// pointer in an interface costs no allocation.
package ctxhook

import (
	"sync"
	"sync/atomic"
	"time"
)

// A Param is a route parameter: its name and its value, which is a substring of the request's
// path and so borrowed from the request's memory.
type Param struct {
	Key, Value string
}

var (
	// SetParams replaces the route parameters of the request c (a *core.Ctx) with ps, which
	// the request keeps, not copies, until it ends.
	SetParams func(c any, ps []Param)

	// Params returns the route parameters of the request c (a *core.Ctx).
	Params func(c any) []Param

	// DetachUntil detaches the request c (a *core.Ctx) until d has passed, then runs k (a
	// func(*core.Ctx, error)) with a nil error; earlier only for a Resume, a Waker, the client
	// leaving or a shutdown.
	DetachUntil func(c any, d time.Duration, k any)

	// Route returns the method and the decoded path of the request c (a *core.Ctx) without
	// copying them: borrowed until the handler returns.
	Route func(c any) (method, path string)

	// Check returns nil when the code running is the request c's own (a *core.Ctx's handler,
	// continuation or hooks, now), and otherwise the error (core.ErrOutsideRequest, naming the
	// call op) that the Ctx's own methods return or panic with, the refusal counted and logged
	// as theirs: for a function that touches what the request's loop owns before it calls one
	// of those methods.
	Check func(c any, op string) error

	// HoldWork parks the handler of c (a *core.Ctx) as Ctx.Hold does, for work it handed to
	// another goroutine (wait.Do): Server.Stats counts the connection as Working, not Parked.
	HoldWork func(c any) error

	// SuspendWork parks the handler of c (a *core.Ctx) as Ctx.Suspend does (no timeout), for
	// work it handed to another goroutine and leaves behind if the request ends first
	// (wait.Call): counted as Working, as HoldWork is.
	SuspendWork func(c any) error

	// SetRoute records that the request c (a *core.Ctx) matched the route id (see RouteID).
	SetRoute func(c any, id uint16)

	// InHandler reports, without counting or logging a refusal, whether the code running is the
	// request c's handler (a *core.Ctx's), in its coroutine: the code that may park. A package
	// whose calls park when they can, and queue or post otherwise, asks it first.
	InHandler func(c any) bool

	// OnLoopStack runs f(p, b, n) on the loop's own goroutine while the handler of c (a
	// *core.Ctx) waits, and returns its result, f holding the handler's right to use c: for
	// stack-hungry work done by a handler that parks for long, whose coroutine's stack would
	// otherwise stay grown (see core/loopstack.go). f is a function and its arguments rather
	// than a closure so that the call allocates nothing. Outside the handler's coroutine f
	// runs at once.
	OnLoopStack func(c any, f func(p any, b []byte, n int) int, p any, b []byte, n int) int

	// Resume wakes the request c (a *core.Ctx) where it is parked in Suspend or Hold, or its
	// pending continuation, with err; it does nothing otherwise. Call it on c's loop, and only
	// for a park that is certainly c's current request's — a wait that unlinks itself before
	// its request can end — since unlike a Waker it cannot tell a later request's park.
	Resume func(c any, err error)
)

// The route patterns requests have matched, by id, so that a request records its route in a
// number (what a Ctx has room for) and reads it back as the pattern. Patterns are registered
// when a router is built and never removed: there are as many as the program has routes.
var routes struct {
	mu    sync.Mutex
	ids   map[string]uint16
	names atomic.Pointer[[]string] // by id; replaced, never changed, so readers need no lock
}

// RouteID returns the id of the route pattern, registering it the first time: never 0, which
// stands for no route. A program has at most 65,535 patterns (a request keeps the id in 16 bits).
func RouteID(pattern string) uint16 {
	routes.mu.Lock()
	defer routes.mu.Unlock()
	if id, ok := routes.ids[pattern]; ok {
		return id
	}
	var old []string
	if p := routes.names.Load(); p != nil {
		old = *p
	} else {
		old = []string{""}
		routes.ids = make(map[string]uint16)
	}
	if len(old) > 0xffff {
		panic("dwell: more than 65,535 route patterns")
	}
	names := append(old[:len(old):len(old)], pattern)
	id := uint16(len(names) - 1)
	routes.ids[pattern] = id
	routes.names.Store(&names)
	return id
}

// RouteName returns the pattern of the route id, "" for 0.
func RouteName(id uint16) string {
	if p := routes.names.Load(); p != nil && int(id) < len(*p) {
		return (*p)[id]
	}
	return ""
}
