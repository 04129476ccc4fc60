package serve

import (
	"iter"
	"strings"
	"time"
)

// A Seam is the plumbing of a request for the packages built on core: what a router, a package of
// waits, a protocol, a body reader or a middleware needs of a request beyond a handler's API. A
// router records its match (SetParams, SetRoute) and metrics read it (RouteLabel); a package of
// waits checks its caller (CheckCaller), asks whether it may park (MayPark), parks until its own
// wake (Hold), counts a wait for work as such (SetWorking), sleeps without a coroutine (DetachFor),
// ends its waits at a shutdown's start (WakeOnShutdown), does stack-hungry work off the handler's
// stack (OnLoopStack) and comes back to the request's loop from other goroutines (Loop); a protocol
// or a bridge reads what framed the request (ConnectProtocol, Chunked) and waits for its body while
// it waits for other work (BodyReady, WaitBody, BodyDone); a middleware bounds the body
// (LimitBody), filters the response's (WrapBody), answers a panic (OnPanic) and hands a library's
// context values to the handler (SetValuesFrom). dwell's own router, wait, websocket, body, nethttp
// and middleware packages use these and nothing hidden, so that a package outside the module can do
// what they do. A handler seldom needs one, but for Loop.
//
// A Seam is a Ctx seen from below, a value of one word: Ctx.Seam returns it without an
// allocation. Its methods check their caller as the Ctx's own do (see Ctx), refusing all but the
// request's own code while the request lasts — except MayPark, which refuses nothing, and Loop,
// which any goroutine may call.
type Seam struct{ cx *Ctx }

// Seam returns the request's plumbing for packages built on core (see Seam). It checks
// nothing itself, and costs nothing: each of the Seam's methods checks its caller.
func (cx *Ctx) Seam() Seam { return Seam{cx} }

// Loop returns the loop serving the request: to run code on it from another goroutine
// (Loop.Post), and to arm a loop timer (Loop.AfterFunc). It may be called from any goroutine,
// also after the request has ended: a Ctx belongs to one loop for its whole life.
func (s Seam) Loop() *Loop { return s.cx.Loop }

// A Param is a route parameter: its name, and its value in the request's path.
type Param struct {
	Key, Value string
}

// SetParams sets the request's route parameters, as a router does once it has matched the
// request; nil or empty clears them. The request keeps ps itself, not a copy, until it ends.
// The values may be substrings of the request's path (RequestBytes.Path), borrowed as it is;
// the names must be the router's own (its pattern's), since Ctx.Params hands them out as they
// are.
func (s Seam) SetParams(ps []Param) {
	cx := s.cx
	cx.check("Seam().SetParams")
	if len(ps) == 0 {
		if cx.Extra != nil {
			cx.Extra.params = nil
		}
		return
	}
	cx.extra().params = ps
}

// Params returns the request's route parameters, name and value, in the order the router set
// them. Each value is a copy, the caller's to keep; Param reads one by its name.
func (cx *Ctx) Params() iter.Seq2[string, string] {
	cx.check("Params")
	return func(yield func(string, string) bool) {
		if cx.Extra == nil {
			return
		}
		for _, p := range cx.Extra.params {
			if !yield(p.Key, strings.Clone(p.Value)) {
				return
			}
		}
	}
}

// A Route names what served a request, for logs, traces and metrics: a route's pattern as it
// was registered ("/todos/:id"), or a label for an answer of the router's own, which does not
// begin with '/' ("(not found)"). A router makes one per route when it is built, and records
// it on each request it routes (Seam.SetRoute): a request keeps a pointer, so that naming its
// route costs it a word and no lookup.
type Route struct{ name string }

// NewRoute returns a Route named name.
func NewRoute(name string) *Route { return &Route{name: name} }

// Name returns the route's name: a pattern, or a label.
func (r *Route) Name() string { return r.name }

// SetRoute records that the request is served by r (nil: by no route), for Ctx.Route and
// RouteLabel. A router sets it before its middleware runs.
func (s Seam) SetRoute(r *Route) {
	s.cx.check("Seam().SetRoute")
	s.cx.route = r
}

// RouteLabel is Ctx.Route for metrics, which count every request under some label: the pattern
// of the route that matched, or, for a request the router answered itself, a label that no
// pattern can be (patterns start with '/'): "(redirect)", "(options)", "(method not allowed)"
// or "(not found)" (package router's Label constants); "" when no router served the request.
// The router sets it (SetRoute) before its middleware runs, for its own answers as for routes.
func (s Seam) RouteLabel() string {
	s.cx.check("Seam().RouteLabel")
	return s.cx.routeName()
}

// routeName returns the name of the request's route, "" when none was set.
func (cx *Ctx) routeName() string {
	if cx.route == nil {
		return ""
	}
	return cx.route.name
}

// CheckCaller returns nil when the code running is the request's own (its handler, its
// continuation, the hooks the server runs for it), and otherwise ErrOutsideRequest naming op,
// counted and logged as a refusal of the Ctx's own methods is. It is for a function that
// touches something the request's loop owns (a wait list of its own, say) before it calls a
// method of the Ctx, which would check too late.
func (s Seam) CheckCaller(op string) error {
	cx := s.cx
	if !cx.owned() {
		return cx.misused(op)
	}
	return nil
}

// MayPark reports whether the code running is the request's handler, in its coroutine: the
// only code that may park (Ctx.Suspend, Hold, a body read). A package whose calls park when
// they can, and queue or post otherwise, asks it first. It refuses nothing and logs nothing.
func (s Seam) MayPark() bool {
	cx := s.cx
	return cx.Loop != nil && cx.owned() && cx.InHandler()
}

// SetWorking says whether the handler's parks wait for work it handed to another goroutine
// (package wait's Do and Call set it around their Hold and Suspend): Server.Stats counts such a
// parked request as Working rather than Parked. Nothing else about the park changes.
func (s Seam) SetWorking(working bool) {
	cx := s.cx
	cx.check("Seam().SetWorking")
	if working {
		cx.parkf |= parkWorking
	} else {
		cx.parkf &^= parkWorking
	}
}

// DetachFor is Ctx.Detach for a request that waits for time itself to pass (wait.After): k
// runs with a nil error once d has passed, and earlier, as after Detach, for a Waker, the
// client leaving or a shutdown. d below a nanosecond is a nanosecond: k never runs before the
// handler has returned.
func (s Seam) DetachFor(d time.Duration, k func(c *Ctx, err error)) {
	cx := s.cx
	cx.check("Seam().DetachFor")
	cx.detach(max(d, 1), k, true)
}

// OnLoopStack runs f(p, b, n) on the loop's own goroutine while the handler waits, and returns
// its result: for stack-hungry work (a handshake, a write through a deep encoder) done by a
// handler that then parks for long, whose coroutine's stack would otherwise stay grown for all
// that time (a coroutine's stack starts at 2 KiB and, once grown, stays so while it parks). f
// holds the handler's right to use the Ctx but cannot park; a panic in f goes on in the
// handler. It takes a function and its arguments rather than a closure so that the call
// allocates nothing. Anywhere but in the handler's coroutine (a continuation, a hook), f runs
// at once where it is called.
func (s Seam) OnLoopStack(f func(p any, b []byte, n int) int, p any, b []byte, n int) int {
	cx := s.cx
	cx.check("Seam().OnLoopStack")
	return cx.onLoopStack(f, p, b, n)
}
