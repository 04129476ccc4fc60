package core

import (
	"iter"
	"net/netip"
)

// A Handler serves one request. It runs as a coroutine on its connection's loop: it may park
// (Suspend, a body read, a write to a slow client, the wait package) without blocking the loop,
// but it must not block the thread — see package wait for blocking calls.
type Handler func(c *Ctx)

// A Ctx is one request and its response. It is valid until the handler returns (or, for a
// detached handler, until its continuation finishes) and is reused afterwards.
//
// Borrowed values: strings and slices a Ctx returns (method, target, path, query values, header
// values, params) point into the request's own memory. They stay valid until the handler
// returns, across parks included, and are reused afterwards; copy what you keep
// (strings.Clone).
type Ctx struct {
	tm   timer // first: see timer; the deadline of SuspendFor and DetachFor
	conn *conn
	req  request
	body bodyState

	// Response.
	status    uint16
	rflags    respFlags
	state     ctxState
	park      parkKind
	gone      errCode // the client left (ErrClosed) or the grace period ended (ErrShutdown)
	woken     errCode // what the last wake passed: a coded error, or errOther (see wakeErr)
	gen       uint32  // counts ended parks; a Waker holds the value for the park it targets
	drainLeft int32   // unread body bytes the loop may still discard after the handler
	declLen   int64   // Content-Length set by the handler; -1 when none
	written   int64   // body bytes the handler has written
	x         *ctxExtra

	// Coroutine and parking.
	co      *coro
	detachK func(*Ctx, error)
}

type ctxState uint8

const (
	ctxIdle     ctxState = iota // no handler: before it starts, or after it finished
	ctxRunning                  // the handler's coroutine (or continuation) is running
	ctxParked                   // the coroutine is suspended
	ctxReady                    // woken; resumes at the top of the loop
	ctxReturned                 // the handler returned; the loop finishes up
	ctxDetached                 // the handler returned after Detach; a continuation is pending
	ctxDetachedReady
)

// ctxExtra holds what only some requests need: response fields and route parameters. It is
// made the first time a request needs it and stays with the Ctx in the pool, so that a parked
// request that set neither does not pay for their slices.
type ctxExtra struct {
	hdrs   []hdr
	params []Param
	rare   *ctxRare
}

// ctxRare holds what hardly any request needs, out of the way of those that need hdrs or params.
type ctxRare struct {
	reqCtx  *requestContext
	wakeErr error // an error passed to Resume that has no errCode
}

func (cx *Ctx) rare() *ctxRare {
	x := cx.extra()
	if x.rare == nil {
		x.rare = &ctxRare{}
	}
	return x.rare
}

func (cx *Ctx) extra() *ctxExtra {
	if cx.x == nil {
		cx.x = &ctxExtra{}
	}
	return cx.x
}

// A Param is a route parameter, set by a router.
type Param struct {
	Key, Value string
}

// getCtx takes a Ctx from the loop's pool for a request on c.
func (l *Loop) getCtx(c *conn) *Ctx {
	var cx *Ctx
	if n := len(l.ctxs); n > 0 {
		cx = l.ctxs[n-1]
		l.ctxs[n-1] = nil
		l.ctxs = l.ctxs[:n-1]
	} else {
		cx = &Ctx{}
		cx.tm.init(timerCtx)
	}
	cx.conn = c
	cx.req = request{contentLength: -1}
	return cx
}

// putCtx returns a Ctx whose request is over to the pool.
func (l *Loop) putCtx(cx *Ctx) {
	cx.conn = nil
	if len(l.ctxs) < ctxPoolMax {
		l.ctxs = append(l.ctxs, cx)
	}
}

// ctxPoolMax bounds the idle Ctxs a loop keeps.
const ctxPoolMax = 1024

// start runs the handler for the parsed request in a pooled coroutine, until it returns or parks.
func (cx *Ctx) start() {
	l := cx.conn.l
	cx.status = 0
	cx.rflags = 0
	if cx.req.minor == 1 {
		cx.rflags |= rfHTTP11
	}
	if cx.Method() == "HEAD" {
		cx.rflags |= rfHead
	}
	cx.declLen = -1
	cx.written = 0
	cx.gone = 0
	cx.co = l.getCoro()
	cx.co.ctx = cx
	l.switchTo(cx)
}

// active reports whether the request's handler or continuation has yet to finish.
func (cx *Ctx) active() bool { return cx.state != ctxIdle }

// releaseRequest returns the request head to the pool: borrowed values end here.
func (cx *Ctx) releaseRequest() {
	if cx.req.arena != nil {
		cx.conn.l.pool.put(cx.req.arena)
	}
	cx.req = request{contentLength: -1}
	cx.ResetParams()
}

// end is the last step of a request's response: what it held goes back, except the body framing,
// which the loop may still need to skip the unread rest.
func (cx *Ctx) end() {
	l := cx.conn.l
	cx.releaseRequest()
	cx.clearHeaders()
	l.timers.stop(&cx.tm)
	cx.gen++
	cx.woken = 0
	cx.detachK = nil
	if x := cx.x; x != nil && x.rare != nil {
		r := x.rare
		r.wakeErr = nil
		if r.reqCtx != nil {
			r.reqCtx.cancel(errRequestEnded)
			r.reqCtx = nil
		}
	}
	cx.state = ctxIdle
}

// Method returns the request method, such as "GET". Borrowed: valid until the handler returns.
func (cx *Ctx) Method() string { return cx.req.str(cx.req.method) }

// Target returns the request-target exactly as received, such as "/a%20b?x=1". Borrowed.
func (cx *Ctx) Target() string { return cx.req.str(cx.req.target) }

// Path returns the target's path, percent-decoded ("/a b"); "*" for "OPTIONS *"; "/" for an
// absolute-form target without a path. Borrowed.
func (cx *Ctx) Path() string { return cx.req.str(cx.req.path) }

// RawQuery returns the target's query without the "?", undecoded. Borrowed.
func (cx *Ctx) RawQuery() string { return cx.req.str(cx.req.rawQuery) }

// Query returns the first value of the query parameter name, decoded ('+' is a space), or "" when
// absent. Borrowed.
func (cx *Ctx) Query(name string) string {
	v, _ := cx.req.queryValue(name)
	return v
}

// LookupQuery is Query that also reports whether the parameter is present.
func (cx *Ctx) LookupQuery(name string) (string, bool) { return cx.req.queryValue(name) }

// Proto returns "HTTP/1.1" or "HTTP/1.0". Requests with a higher 1.x minor version are served
// as 1.1 and report "HTTP/1.1".
func (cx *Ctx) Proto() string {
	if cx.req.minor == 0 {
		return "HTTP/1.0"
	}
	return "HTTP/1.1"
}

// ProtoMinor returns the request's minor version, 0 or 1.
func (cx *Ctx) ProtoMinor() int { return int(cx.req.minor) }

// Host returns the authority the request is for: the absolute-form target's, else the Host
// header. Borrowed.
func (cx *Ctx) Host() string {
	if a := cx.req.authority(); a != "" {
		return a // RFC 9112 §3.2.2: an absolute-form target's authority replaces Host
	}
	return cx.Header("Host")
}

// Header returns the value of the first header field named name (case-insensitive), or "".
// Borrowed.
func (cx *Ctx) Header(name string) string {
	v, _ := cx.req.lookup(name)
	return v
}

// LookupHeader is Header that also reports whether the field is present.
func (cx *Ctx) LookupHeader(name string) (string, bool) { return cx.req.lookup(name) }

// Headers iterates over the request's header fields in the order received, with names as
// sent and values trimmed of surrounding whitespace. Borrowed.
func (cx *Ctx) Headers() iter.Seq2[string, string] {
	return func(yield func(string, string) bool) {
		r := &cx.req
		for _, f := range r.fields() {
			if !yield(r.str(f.name), r.str(f.value)) {
				return
			}
		}
	}
}

// ContentLength returns the request's declared Content-Length, or -1 when it has none (no body,
// or a chunked one).
func (cx *Ctx) ContentLength() int64 { return cx.req.contentLength }

// Chunked reports whether the request body uses the chunked transfer coding.
func (cx *Ctx) Chunked() bool { return cx.req.has(reqChunked) }

// RemoteAddr returns the client's address (the zero value once the connection is closed).
func (cx *Ctx) RemoteAddr() netip.AddrPort { return cx.conn.remoteAddr() }

// Param returns the value of the route parameter name, or "". Borrowed.
func (cx *Ctx) Param(name string) string {
	for _, p := range cx.Params() {
		if p.Key == name {
			return p.Value
		}
	}
	return ""
}

// Params returns the route parameters in route order. Borrowed: the slice is reused.
func (cx *Ctx) Params() []Param {
	if cx.x == nil {
		return nil
	}
	return cx.x.params
}

// ResetParams removes the route parameters: a router that matches the request again (after a
// rewrite, say) starts afresh. The loop resets them at the end of each request.
func (cx *Ctx) ResetParams() {
	if x := cx.x; x != nil {
		x.params = nil // most often a router's own slice (SetParams): nothing to keep
	}
}

// SetParams replaces the route parameters with ps, which the Ctx keeps rather than copies: ps
// must not change until the request ends. A router whose matcher already made the slice saves
// a copy this way.
func (cx *Ctx) SetParams(ps []Param) {
	if len(ps) == 0 {
		cx.ResetParams()
		return
	}
	cx.extra().params = ps
}

// SetParam adds a route parameter; routers call it before the route's handler runs.
func (cx *Ctx) SetParam(name, value string) {
	x := cx.extra()
	x.params = append(x.params, Param{name, value})
}

// Loop returns the loop serving the request.
func (cx *Ctx) Loop() *Loop { return cx.conn.l }
