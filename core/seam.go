package core

import (
	"context"
	"time"

	"github.com/dwellhttp/dwell/core/internal/serve"
	"github.com/dwellhttp/dwell/internal/alias"
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
type Seam struct{ x serve.Seam }

// A Param is a route parameter: its name, and its value in the request's path.
type Param struct {
	Key, Value string
}

// A Route names what served a request, for logs, traces and metrics: a route's pattern as it
// was registered ("/todos/:id"), or a label for an answer of the router's own, which does not
// begin with '/' ("(not found)"). A router makes one per route when it is built, and records
// it on each request it routes (Seam.SetRoute): a request keeps a pointer, so that naming its
// route costs it a word and no lookup.
type Route struct{ x serve.Route }

// NewRoute returns a Route named name.
func NewRoute(name string) *Route {
	return alias.As[*Route](serve.NewRoute(name))
}

// Name returns the route's name: a pattern, or a label.
func (r *Route) Name() string {
	return r.x.Name()
}

// OnPanic makes f answer for a panic of the handler (or of its continuation), in place of the
// server's plain-text 500: for a recover middleware that answers in JSON, say. f runs once the
// panic has been recovered and logged, and only when the response has not started (a started
// one is cut short instead, see ErrAbortHandler); it writes a response as a handler does,
// except that it cannot park. The header fields set before the panic stay, those describing
// the content aside. The connection closes after the response. A later OnPanic replaces f.
func (s Seam) OnPanic(f func(c *Ctx, v any)) {
	s.x.OnPanic(alias.As[func(c *serve.Ctx, v any)](f))
}

// BodyReady reports whether Ctx.ReadBody would return without parking for the client: bytes of the
// body have arrived that it has not returned, or the body has ended or failed, or the client
// has gone. (Over HTTP/1.1, bytes still in the socket are not seen: WaitBody waits for them.)
func (s Seam) BodyReady() bool {
	return s.x.BodyReady()
}

// WaitBody parks the handler until body bytes arrive (or the body ends, or fails), a Waker
// wakes it, or the client leaves; it returns at once when BodyReady. A client that sent
// Expect: 100-continue gets its 100 Continue, as from Ctx.ReadBody. It is for a handler that
// reads the body while it waits for other work: a bridge serving a reading and a writing
// goroutine at once, which must not sit in ReadBody while a write waits. It returns what the
// Waker passed, nil when the body ended the wait, ErrClosed (or ErrShutdown) when the client
// left, and ErrOutsideRequest outside the handler itself.
func (s Seam) WaitBody() error {
	return s.x.WaitBody()
}

// BodyDone reports whether the whole request body has been read.
func (s Seam) BodyDone() bool {
	return s.x.BodyDone()
}

// LimitBody bounds the request body to n bytes, below Options.MaxBodyBytes (n <= 0 leaves the
// server's limit alone). Call it before reading the body: a declared Content-Length over n
// fails at once, without a 100 Continue, and a chunked body fails as it crosses n; reads then
// return ErrBodyTooLarge, and a handler that writes nothing gets a 413 from the server. It is
// what a per-route body limit is built on.
func (s Seam) LimitBody(n int64) {
	s.x.LimitBody(n)
}

// ConnectProtocol returns the protocol an HTTP/2 extended CONNECT asks for (RFC 8441's
// :protocol) — "websocket" for a WebSocket a browser opens on its HTTP/2 connection — and ""
// for every other request. An extended CONNECT for "websocket" is served as the GET whose
// upgrade it replaces (RFC 8441 §5): Ctx.Method reports GET, routes for GET serve it, and
// Ctx.HandOver answers it (200, not 101) and hands its stream over — and only HandOver: any
// other 2xx a handler gives it goes out as the server's 501 (ErrTunnelRefused), since the
// client would read a 2xx as its tunnel open. One for another protocol keeps its method,
// CONNECT (see Options.AllowCONNECT). Options.DisableConnectProtocol stops clients from
// sending any.
func (s Seam) ConnectProtocol() string {
	return s.x.ConnectProtocol()
}

// Chunked reports whether the request body uses the chunked transfer coding.
func (s Seam) Chunked() bool {
	return s.x.Chunked()
}

// WrapBody puts a filter in front of the response body: wrap receives the BodyWriter the
// filter writes to, and returns the filter. From then on the handler's Write, WriteString,
// Flush and SendFile go through the filter; the server calls its Close when the handler (or
// its continuation) finishes, before completing the response. A later WrapBody wraps the
// filters already there. Install a filter before the body's first byte is written. A filter
// that implements Transparent can let SendFile go around it.
//
// The writer behind a filter keeps the response's backpressure: its Write parks the handler
// while the client is slow, exactly as Ctx.Write does. A filter that changes the body's length
// or encoding sets the header fields that say so (Content-Encoding, and no Content-Length)
// before its first write reaches the response. When the server replaces the response with an
// error of its own (a request body that broke, say), it drops the filter without closing it.
func (s Seam) WrapBody(wrap func(next BodyWriter) BodyWriter) {
	s.x.WrapBody(wrap)
}

// Hold parks the handler like Ctx.Suspend, but only a wake ends it (a Waker's, or the wake of a
// package built on core, such as wait's, for the park it made): a client leaving, a shutdown
// or the request's deadline is recorded and returned once it ends, not acted on. It is for
// waiting on work that must run to its end, such as a call already running on another
// goroutine (wait.Do).
func (s Seam) Hold() error {
	return s.x.Hold()
}

// WakeOnShutdown makes the request's waits end with ErrShutdown as soon as a shutdown begins,
// rather than when its grace period ends: for a long poll or an event stream, which can always
// answer "nothing yet", so that its client gets that answer at once and reconnects elsewhere. The
// response can still be written; a handler that writes nothing gets a 503. It applies to Suspend
// and Detach (and so to the waits of package wait built on them), not to Hold, body reads or
// writes. Topic.Next calls it.
func (s Seam) WakeOnShutdown() {
	s.x.WakeOnShutdown()
}

// Loop returns the loop serving the request: to run code on it from another goroutine
// (Loop.Post), and to arm a loop timer (Loop.AfterFunc). It may be called from any goroutine,
// also after the request has ended: a Ctx belongs to one loop for its whole life.
func (s Seam) Loop() *Loop {
	return alias.As[*Loop](s.x.Loop())
}

// SetParams sets the request's route parameters, as a router does once it has matched the
// request; nil or empty clears them. The request keeps ps itself, not a copy, until it ends.
// The values may be substrings of the request's path (RequestBytes.Path), borrowed as it is;
// the names must be the router's own (its pattern's), since Ctx.Params hands them out as they
// are.
func (s Seam) SetParams(ps []Param) {
	s.x.SetParams(alias.Slice[serve.Param](ps))
}

// SetRoute records that the request is served by r (nil: by no route), for Ctx.Route and
// RouteLabel. A router sets it before its middleware runs.
func (s Seam) SetRoute(r *Route) {
	s.x.SetRoute(alias.As[*serve.Route](r))
}

// RouteLabel is Ctx.Route for metrics, which count every request under some label: the pattern
// of the route that matched, or, for a request the router answered itself, a label that no
// pattern can be (patterns start with '/'): "(redirect)", "(options)", "(method not allowed)"
// or "(not found)" (package router's Label constants); "" when no router served the request.
// The router sets it (SetRoute) before its middleware runs, for its own answers as for routes.
func (s Seam) RouteLabel() string {
	return s.x.RouteLabel()
}

// CheckCaller returns nil when the code running is the request's own (its handler, its
// continuation, the hooks the server runs for it), and otherwise ErrOutsideRequest naming op,
// counted and logged as a refusal of the Ctx's own methods is. It is for a function that
// touches something the request's loop owns (a wait list of its own, say) before it calls a
// method of the Ctx, which would check too late.
func (s Seam) CheckCaller(op string) error {
	return s.x.CheckCaller(op)
}

// MayPark reports whether the code running is the request's handler, in its coroutine: the
// only code that may park (Ctx.Suspend, Hold, a body read). A package whose calls park when
// they can, and queue or post otherwise, asks it first. It refuses nothing and logs nothing.
func (s Seam) MayPark() bool {
	return s.x.MayPark()
}

// SetWorking says whether the handler's parks wait for work it handed to another goroutine
// (package wait's Do and Call set it around their Hold and Suspend): Server.Stats counts such a
// parked request as Working rather than Parked. Nothing else about the park changes.
func (s Seam) SetWorking(working bool) {
	s.x.SetWorking(working)
}

// DetachFor is Ctx.Detach for a request that waits for time itself to pass (wait.After): k
// runs with a nil error once d has passed, and earlier, as after Detach, for a Waker, the
// client leaving or a shutdown. d below a nanosecond is a nanosecond: k never runs before the
// handler has returned.
func (s Seam) DetachFor(d time.Duration, k func(c *Ctx, err error)) {
	s.x.DetachFor(d, alias.As[func(c *serve.Ctx, err error)](k))
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
	return s.x.OnLoopStack(f, p, b, n)
}

// SetValuesFrom makes the values of ctx the request's as well: c.Value(key) and
// c.Context().Value(key) return ctx.Value(key) for a key that no later Ctx.SetValue shadows. It is
// for a middleware that hands the handler what a library stores in a context under a key of its own
// — a tracing span (trace.ContextWithSpan), baggage — so that code given c.Context() finds it. ctx
// carries only what to add: derive it from context.Background(), not from c.Context() (that panics,
// as a lookup through it would never end). Its cancellation is ignored.
func (s Seam) SetValuesFrom(ctx context.Context) {
	s.x.SetValuesFrom(ctx)
}
