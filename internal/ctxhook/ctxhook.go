// Package ctxhook lets dwell's own packages reach the parts of a core.Ctx that are plumbing
// rather than handler API: a router sets route parameters, package wait detaches a request
// until a time has passed. Package core fills these variables in when it is initialised.
//
// The Ctx travels as an any: this package cannot name core.Ctx (core imports it), and a
// pointer in an interface costs no allocation.
package ctxhook

import "time"

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

	// PathString returns the decoded path of the request c (a *core.Ctx) without copying it:
	// borrowed until the handler returns.
	PathString func(c any) string
)
