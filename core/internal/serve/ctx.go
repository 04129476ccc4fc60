package serve

import (
	"net/netip"

	"github.com/dwellhttp/dwell/core/internal/wire"
	"github.com/dwellhttp/dwell/internal/alias"
	"github.com/dwellhttp/dwell/internal/bufpool"
)

// A Handler serves one request. It runs as a coroutine on its connection's loop: it may park
// (a body read, a write to a slow client, the wait package) without blocking the loop, but it
// must not block the thread — see package wait for blocking calls.
type Handler func(c *Ctx)

// A Ctx is one request and its response. It is valid until the handler returns (or, for a
// detached handler, until its continuation finishes) and is reused afterwards.
//
// # Who may use it
//
// Only the request's own code, while the request lasts: its handler, its continuation (Detach), and
// the hooks the server runs for it (OnDone, Seam.OnPanic, a body filter). A Ctx serves the next
// request once its own has ended, so every method first checks its caller (the Seam's too), and
// refuses any other — a goroutine the handler started, a wait.Do function, a Loop.Post callback or
// a timer, another request's handler, anything after the request ended — without touching the Ctx:
// the methods that return an error return ErrOutsideRequest, the others panic with it, and the
// first refusal of a server is logged with the caller's stack. Hand blocking work to wait.Do and
// use its result in the handler; wake a parked handler from elsewhere with a Waker; run code on the
// loop with Loop.Post (c.Seam().Loop(), which may be called from anywhere).
//
// # Owned and borrowed values
//
// Strings a Ctx returns (Method, Path, Query, Header, Param, ...) are the caller's to keep,
// as bufio.Scanner's Text is: each call copies the value out of the request (Method returns
// a constant for the common methods). Its Bytes view (RequestBytes) is the zero-copy way,
// like Scanner's Bytes: c.Bytes().Header(name) is a slice of the request's own memory, and
// borrowed (read it, never modify it), valid until the handler returns (across parks
// included) and reused by a later request after that. Copy what you keep. In builds with the
// race detector a request's memory is never reused and is overwritten with the text
// "dwell:freed " when the request ends, so a retained borrowed slice shows as that text in the
// first test that reads it.
//
// After a handler has detached (Detach, wait.After, Topic.OnNext), its request's values are
// gone: in the continuation, the accessors return empty values, so copy (into the strings
// they return) what the continuation needs before the handler returns. The response side —
// status, header fields, body — stays the continuation's to finish.
type Ctx struct {
	tm       timer    // first: see timer; the deadline of Suspend and Detach
	Loop     *Loop    // the Ctx's loop for its whole life: Ctxs are pooled per loop
	Exchange Exchange // what the request is served on; nil once the request has ended
	Carrier  *Carrier // ex's Carrier
	Req      wire.Request
	Body     bodyState
	start    int64 // loop clock when the request's handler started

	// Response.
	Status   uint16
	Resp     respFlags
	ReqFlags reqFlags // what the request's head said that the response follows (ReqHTTP11, …)
	via      via      // the listener the request came by (its handler), and whether it speaks TLS
	State    ctxState
	park     parkKind
	parkf    parkFlags
	Gone     errCode // the client left (ErrClosed) or the grace period ended (ErrShutdown)
	woken    errCode // what the last wake passed: a coded error, or errOther (see wakeErr)
	gen      uint32  // counts ended parks; a Waker holds the value for the park it targets
	DeclLen  int64   // Content-Length set by the handler; -1 when none
	Written  int64   // body bytes the handler has written
	Extra    *ctxExtra
	route    *Route // what served the request (SetRoute), nil when none

	// Coroutine and parking.
	co      *coro
	detachK func(*Ctx, error)
}

type ctxState uint8

const (
	CtxIdle     ctxState = iota // no handler: before it starts, or after it finished
	ctxRunning                  // the handler's coroutine (or continuation) is running
	ctxParked                   // the coroutine is suspended
	ctxReady                    // woken; resumes at the top of the loop
	ctxReturned                 // the handler returned; the loop finishes up
	ctxDetached                 // the handler returned after Detach; a continuation is pending
	ctxDetachedReady
)

// ctxExtra holds what only some requests need: response header fields and route parameters.
// It is made the first time a request needs it and stays with the Ctx in the pool, so that a
// parked request that set neither does not pay for their slices.
type ctxExtra struct {
	hdrs   []byte // the response's field set: names and values behind their lengths (header.go), from the loop's pool
	names  uint64 // the NameBit of every line in hdrs, and of lines removed since it was emptied
	params []Param
	Rare   *ctxRare
}

// ctxRare holds what hardly any request needs, out of the way of those that need hdrs or params.
type ctxRare struct {
	reqCtx     *requestContext
	values     *valueNode   // request-scoped values, newest first (SetValue), newer than inline's
	onDone     []func(Done) // completion hooks (OnDone)
	filter     BodyWriter   // the outermost body filter (WrapBody), or nil
	wakeErr    error        // an error a wake passed that has no errCode
	bodyErr    error        // a body error that has no errCode
	panicV     any          // what the handler panicked with, for Done.Err
	onPanic    func(*Ctx, any)
	answered   error          // the error the server answered for, for Done.Err
	deadline   *Timer         // the request's deadline (SetTimeout), kept for the Ctx's next requests
	deadlineAt int64          // when it fires, on the loop clock; 0 when not set
	remote     netip.AddrPort // the client's address, once asked for
	TrailerSet []string       // response trailers (SetTrailer): name, value, ...

	// The first values SetValue attached, oldest first, while the request had no Context:
	// inline[:ninline]. Making the Context moves them to values.
	inline  *[InlineValues]valueSlot
	ninline uint8
}

func (cx *Ctx) rare() *ctxRare {
	x := cx.extra()
	if x.Rare == nil {
		x.Rare = &ctxRare{}
	}
	return x.Rare
}

func (cx *Ctx) extra() *ctxExtra {
	if cx.Extra == nil {
		cx.Extra = cx.Loop.getExtra()
	}
	return cx.Extra
}

// hasDoneHooks reports whether the request has completion hooks (OnDone).
func (cx *Ctx) hasDoneHooks() bool {
	return cx.Extra != nil && cx.Extra.Rare != nil && len(cx.Extra.Rare.onDone) > 0
}

// RunDone calls the completion hooks, if any, with the response's outcome (done.go): the
// request that has none does not go there.
func (cx *Ctx) RunDone() {
	if cx.hasDoneHooks() {
		cx.runDone()
	}
}

// HasTrailers reports whether the response has trailers to send.
func (cx *Ctx) HasTrailers() bool {
	return cx.Extra != nil && cx.Extra.Rare != nil && len(cx.Extra.Rare.TrailerSet) > 0
}

// filter returns the outermost body filter, or nil.
func (cx *Ctx) filter() BodyWriter {
	if x := cx.Extra; x != nil && x.Rare != nil {
		return x.Rare.filter
	}
	return nil
}

// getExtra returns an empty ctxExtra, one a handed-over request gave back if there is one. l
// may be nil, for a Ctx no loop made (a test's).
func (l *Loop) getExtra() *ctxExtra {
	if l == nil {
		return &ctxExtra{}
	}
	if n := len(l.extras); n > 0 {
		x := l.extras[n-1]
		l.extras[n-1] = nil
		l.extras = l.extras[:n-1]
		return x
	}
	return &ctxExtra{}
}

// putExtra keeps an empty ctxExtra for getExtra, a few of them at most: between a request
// that gives one back and the next that needs one, the list is one long.
func (l *Loop) putExtra(x *ctxExtra) {
	if len(l.extras) < 16 {
		l.extras = append(l.extras, x)
	}
}

// GetCtx takes a Ctx from the loop's pool for a request on ex, whose Carrier is cr, that came
// by v.
func (l *Loop) GetCtx(ex Exchange, cr *Carrier, v via) *Ctx {
	var cx *Ctx
	if n := len(l.ctxs); n > 0 {
		cx = l.ctxs[n-1]
		l.ctxs[n-1] = nil
		l.ctxs = l.ctxs[:n-1]
	} else {
		cx = &Ctx{Loop: l}
		cx.tm.Init(timerCtx)
	}
	cx.Exchange, cx.Carrier, cx.via = ex, cr, v
	cx.Req = wire.Request{ContentLength: -1}
	l.nreqs++
	return cx
}

// PutCtx returns a Ctx whose request is over to the pool.
func (l *Loop) PutCtx(cx *Ctx) {
	cx.Exchange, cx.Carrier = nil, nil
	l.nreqs--
	if len(l.ctxs) < ctxPoolMax {
		l.ctxs = append(l.ctxs, cx)
	}
}

// ctxPoolMax bounds the idle Ctxs a loop keeps.
const ctxPoolMax = 1024

// begin readies the response side for a new request, before its handler starts.
func (cx *Ctx) Begin() {
	l := cx.Loop
	cx.Status = 0
	cx.Resp, cx.ReqFlags, cx.parkf = 0, 0, 0
	if cx.Req.Minor == 1 {
		cx.ReqFlags |= ReqHTTP11
	}
	if cx.Req.IsMethod("HEAD") {
		cx.ReqFlags |= reqHead
	}
	cx.DeclLen = -1
	cx.Written = 0
	cx.Gone = 0
	cx.route = nil
	cx.start = l.Clk.Now
}

// active reports whether the request's handler or continuation has yet to finish.
func (cx *Ctx) Active() bool { return cx.State != CtxIdle }

// freeRequest returns the request head to the pool: borrowed values end here.
func (cx *Ctx) freeRequest() {
	if cx.Req.Arena != nil {
		bufpool.PutArena(&cx.Loop.Pool.Pool, cx.Req.Arena)
	}
	cx.Req = wire.Request{ContentLength: -1}
	if x := cx.Extra; x != nil {
		x.params = nil // most often a router's own slice (SetParams): nothing to keep
	}
}

// recycle readies the Ctx for its next request once its response is complete: what the
// request held goes back, except the body framing, which the loop may still need to skip the
// unread rest.
func (cx *Ctx) Recycle() {
	l := cx.Loop
	cx.freeRequest()
	cx.clearHeaders()
	l.Timers.Stop(&cx.tm)
	cx.gen++
	cx.woken = 0
	cx.detachK = nil
	if x := cx.Extra; x != nil && x.Rare != nil {
		r := x.Rare
		if r.reqCtx != nil {
			r.reqCtx.cancel(errRequestEnded)
		}
		if r.deadline != nil {
			r.deadline.stop()
		}
		clear(r.onDone)
		if r.inline != nil {
			clear(r.inline[:r.ninline])
		}
		// The hooks' slice, the value slots (emptied) and the deadline's timer are kept for
		// the Ctx's next requests; the rest is zeroed, so that the next request sees none of
		// this one's values and the GC keeps none alive.
		clear(r.TrailerSet)
		*r = ctxRare{onDone: r.onDone[:0], inline: r.inline, deadline: r.deadline, TrailerSet: r.TrailerSet[:0]}
	}
	cx.State = CtxIdle
}

// BorrowString views b as a string without copying, for a comparison within the call that
// makes it: b (the request's arena, or a header the response owns) does not change meanwhile,
// and the string is never kept.
func BorrowString(b []byte) string { return alias.String(b) }
