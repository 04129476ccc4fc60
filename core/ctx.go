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
	conn *conn
	req  *request

	// Response.
	status  int
	rflags  respFlags
	hdrs    []hdr
	body    writeQueue // the body, held until the head is committed
	declLen int64      // Content-Length set by the handler; -1 when none
	written int64      // body bytes the handler has written
	params  []Param

	// Coroutine and parking.
	co      *coro
	state   ctxState
	park    parkKind
	gen     uint32 // counts ended parks; a Waker holds the value for the park it targets
	wakeErr error
	gone    error // the client left (ErrClosed) or the grace period ended (ErrShutdown)
	detachK func(error)
	tm      timer
	reqCtx  *requestContext
}

type ctxState uint8

const (
	ctxIdle     ctxState = iota // no request
	ctxRunning                  // the handler's coroutine is running
	ctxParked                   // the coroutine is suspended
	ctxReady                    // woken; resumes at the top of the loop
	ctxReturned                 // the handler returned; the loop finishes up
	ctxDetached                 // the handler returned after Detach; a continuation is pending
	ctxDetachedReady
)

// A Param is a route parameter, set by a router.
type Param struct {
	Key, Value string
}

// start begins serving r: the handler runs in a pooled coroutine until it returns or parks.
func (cx *Ctx) start(r *request) {
	l := cx.conn.l
	cx.req = r
	cx.status = 0
	cx.rflags = 0
	cx.declLen = -1
	cx.written = 0
	cx.gone = nil
	cx.co = l.getCoro()
	cx.co.ctx = cx
	l.switchTo(cx)
}

// active reports whether a request is being served.
func (cx *Ctx) active() bool { return cx.state != ctxIdle }

// releaseRequest returns the request head to the pool: borrowed values end here.
func (cx *Ctx) releaseRequest() {
	if cx.req != nil {
		cx.conn.l.putRequest(cx.req)
		cx.req = nil
	}
	clear(cx.params)
	cx.params = cx.params[:0]
}

// end is the last step of a request: everything it held goes back.
func (cx *Ctx) end() {
	l := cx.conn.l
	cx.releaseRequest()
	clear(cx.hdrs)
	cx.hdrs = cx.hdrs[:0]
	cx.body.release(&l.pool)
	l.timers.stop(&cx.tm)
	cx.gen++
	cx.wakeErr = nil
	cx.detachK = nil
	if cx.reqCtx != nil {
		cx.reqCtx.cancel(errRequestEnded)
		cx.reqCtx = nil
	}
	cx.state = ctxIdle
}

// Method returns the request method, such as "GET". Borrowed: valid until the handler returns.
func (cx *Ctx) Method() string { return cx.reqOrEmpty().str(cx.reqOrEmpty().method) }

// Target returns the request-target exactly as received, such as "/a%20b?x=1". Borrowed.
func (cx *Ctx) Target() string { return cx.reqOrEmpty().str(cx.reqOrEmpty().target) }

// Path returns the target's path, percent-decoded ("/a b"); "*" for "OPTIONS *"; "/" for an
// absolute-form target without a path. Borrowed.
func (cx *Ctx) Path() string { return cx.reqOrEmpty().str(cx.reqOrEmpty().path) }

// RawQuery returns the target's query without the "?", undecoded. Borrowed.
func (cx *Ctx) RawQuery() string { return cx.reqOrEmpty().str(cx.reqOrEmpty().rawQuery) }

// Query returns the first value of the query parameter name, decoded ('+' is a space), or "" when
// absent. Borrowed.
func (cx *Ctx) Query(name string) string {
	v, _ := cx.reqOrEmpty().queryValue(name)
	return v
}

// LookupQuery is Query that also reports whether the parameter is present.
func (cx *Ctx) LookupQuery(name string) (string, bool) { return cx.reqOrEmpty().queryValue(name) }

// Proto returns "HTTP/1.1" or "HTTP/1.0". Requests with a higher 1.x minor version are served
// as 1.1 and report "HTTP/1.1".
func (cx *Ctx) Proto() string {
	if cx.reqOrEmpty().minor == 0 {
		return "HTTP/1.0"
	}
	return "HTTP/1.1"
}

// ProtoMinor returns the request's minor version, 0 or 1.
func (cx *Ctx) ProtoMinor() int { return int(cx.reqOrEmpty().minor) }

// Host returns the authority the request is for: the absolute-form target's, else the Host
// header. Borrowed.
func (cx *Ctx) Host() string { return cx.reqOrEmpty().str(cx.reqOrEmpty().host) }

// Header returns the value of the first header field named name (case-insensitive), or "".
// Borrowed.
func (cx *Ctx) Header(name string) string {
	r := cx.reqOrEmpty()
	v, _ := r.lookup(r.fields, name)
	return v
}

// LookupHeader is Header that also reports whether the field is present.
func (cx *Ctx) LookupHeader(name string) (string, bool) {
	r := cx.reqOrEmpty()
	return r.lookup(r.fields, name)
}

// Headers iterates over the request's header fields in the order received, with names as
// sent and values trimmed of surrounding whitespace. Borrowed.
func (cx *Ctx) Headers() iter.Seq2[string, string] {
	return func(yield func(string, string) bool) {
		r := cx.reqOrEmpty()
		for _, f := range r.fields {
			if !yield(r.str(f.name), r.str(f.value)) {
				return
			}
		}
	}
}

// ContentLength returns the request's declared Content-Length, or -1 when it has none (no body,
// or a chunked one).
func (cx *Ctx) ContentLength() int64 { return cx.reqOrEmpty().contentLength }

// Chunked reports whether the request body uses the chunked transfer coding.
func (cx *Ctx) Chunked() bool { return cx.reqOrEmpty().chunked }

// RemoteAddr returns the client's address.
func (cx *Ctx) RemoteAddr() netip.AddrPort { return cx.conn.raddr }

// Param returns the value of the route parameter name, or "". Borrowed.
func (cx *Ctx) Param(name string) string {
	for i := range cx.params {
		if cx.params[i].Key == name {
			return cx.params[i].Value
		}
	}
	return ""
}

// Params returns the route parameters in route order. Borrowed: the slice is reused.
func (cx *Ctx) Params() []Param { return cx.params }

// SetParam adds a route parameter; routers call it before the route's handler runs.
func (cx *Ctx) SetParam(name, value string) {
	cx.params = append(cx.params, Param{name, value})
}

// Loop returns the loop serving the request.
func (cx *Ctx) Loop() *Loop { return cx.conn.l }

// emptyRequest answers accessors once a detached handler's request has been released.
var emptyRequest = request{contentLength: -1}

func (cx *Ctx) reqOrEmpty() *request {
	if cx.req == nil {
		return &emptyRequest
	}
	return cx.req
}

// getRequest returns a pooled request with an arena of at least n bytes.
func (l *Loop) getRequest(n int) *request {
	var r *request
	if k := len(l.reqs); k > 0 {
		r = l.reqs[k-1]
		l.reqs[k-1] = nil
		l.reqs = l.reqs[:k-1]
	} else {
		r = &request{}
	}
	r.arena = l.pool.get(n)
	r.contentLength = -1
	return r
}

func (l *Loop) putRequest(r *request) {
	l.pool.put(r.arena)
	r.reset()
	if len(l.reqs) < coroPoolMax {
		l.reqs = append(l.reqs, r)
	}
}
