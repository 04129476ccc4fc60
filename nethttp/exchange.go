package nethttp

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/internal/bufpool"
	"github.com/dwellhttp/dwell/internal/workers"
)

// An exchange is one request served by a net/http handler: what the loop collected for the
// handler's goroutine, and the calls that goroutine makes back to the loop, which alone may
// touch the request's Ctx.
//
// The dwell handler parks in Seam.Hold while the goroutine runs. A call — read body bytes, write
// or flush response bytes, send a file, finish — is handed over under mu: the goroutine fills
// in call, marks it pending and wakes the parked handler through its Waker; the handler serves
// it on the loop (where it may park again, on a slow client) and answers on done; the goroutine
// waits on done, which is the backpressure.
//
// Reads have a lane of their own (rcall, rpending, rdone), so that a handler may read the body
// on one goroutine while it writes on another — full duplex, as gRPC's streams do over HTTP/2:
// a read waits for the body in Seam.WaitBody, which a write call's wake ends, and is served once
// Seam.BodyReady says ReadBody will not wait. Each lane has at most one call in flight, so a
// call needs no lock of its own: it belongs to whichever side holds the lane's turn.
type exchange struct {
	h    http.Handler
	pool *workers.Pool // the places h runs in (see Pool)

	// Collected on the loop before the goroutine starts; read only by the goroutine.
	method, target, proto, host, remote string
	contentLength                       int64
	chunked, hasBody                    bool
	fields                              []string // request header fields: name, value, name, ...
	params                              []string // route parameters: name, value, ...
	ctx                                 context.Context
	loop                                *core.Loop
	tls                                 *tls.ConnectionState // the connection's, over TLS (a copy)

	mu       sync.Mutex
	waker    core.Waker
	parked   bool  // the handler is in Hold (or WaitBody), and waker ends it
	pending  bool  // call waits for the handler
	rpending bool  // rcall waits for the handler
	readers  int   // reading goroutines between their call and its results (see finish)
	gone     error // the handler can no longer answer calls (see abandon)
	done     chan struct{}
	rdone    chan struct{}

	call  call
	rcall call  // the body reads' lane
	serve *call // the call being served, which the watch marks as waited

	// The loop's watch on a call that may wait for the client (see watch); kept with the
	// exchange when it is recycled.
	watchdog     *core.Timer
	watchdogLoop *core.Loop // the loop whose timer watchdog is
	onClientWait func()     // x.clientWaits, made once: a method value allocates
}

// A call is the goroutine's request to the loop, with its result.
type call struct {
	kind callKind

	// The response head, when it has yet to reach the Ctx: status 0 means there is none. For
	// callInterim, the interim response's status and fields.
	status int
	fields []string // name, value, ...: sanitized, sorted by name
	// implied: the handler set no status and wrote nothing; the Ctx's status is left unset, so
	// that the server may still answer for a body that failed or a shutdown.
	implied bool

	out, p []byte // callWrite and callFinish: buffered bytes, then the caller's own
	flush  bool

	file     *os.File // callSendFile
	off, len int64

	panicV any // callFinish: what the handler panicked with, or nil

	// Results.
	n        int
	err      error
	trailers []string // callRead at the end of a chunked body: name, value, ...
	// callFinish: the response's trailers (http.TrailerPrefix and those the Trailer field
	// declared): name, value, ...
	respTrailers []string
	// waited: the call had to wait for the client, and the exchange gave up its place in the
	// pool meanwhile (see watch); the goroutine takes one again before it goes on.
	waited bool
	// callHijack: the hijacked connection's state, and the Waker that ends the request.
	conn  net.Conn
	waker core.Waker
}

type callKind uint8

const (
	callWrite    callKind = iota + 1 // write out then p, then flush if asked
	callRead                         // read body bytes into p
	callInterim                      // send a 1xx interim response with fields
	callSendFile                     // send len bytes of file from off
	callHijack                       // hand the connection over, after the 101 of status or with out
	callFinish                       // write out and end the response; no answer
)

var exchanges = sync.Pool{New: func() any {
	x := &exchange{done: make(chan struct{}, 1), rdone: make(chan struct{}, 1)}
	x.onClientWait = x.clientWaits
	return x
}}

// do hands x.call (rcall when read) to the handler and waits for its answer, which is in the
// call on return. The handler answers every call, also once its client has gone (with the error
// that says so): its loop does not stop while it holds. A call that had to wait for the client
// gave up the exchange's place in the pool; do takes one again, waiting its turn if the pool is
// full.
func (x *exchange) do(read bool) {
	cl, done := &x.call, x.done
	if read {
		cl, done = &x.rcall, x.rdone
	}
	if x.post(read) {
		<-done
		if cl.waited {
			cl.waited = false
			x.pool.Rejoin(done)
		}
	}
}

// post makes the call (rcall when read) pending and wakes the handler if it is parked. It
// reports false, with the call's error set, when the handler can no longer answer.
func (x *exchange) post(read bool) bool {
	x.mu.Lock()
	if x.gone != nil {
		if read {
			x.rcall.err = x.gone
		} else {
			x.call.err = x.gone
		}
		x.mu.Unlock()
		return false
	}
	if read {
		x.rpending = true
	} else {
		x.pending = true
	}
	w, wake := x.waker, x.parked
	x.parked = false
	x.mu.Unlock()
	if wake && !w.Wake(nil) {
		x.abandon(core.ErrShutdown) // the loop has stopped
		return false
	}
	return true
}

// abandon marks the exchange as no longer served by its handler: calls fail with err at once.
func (x *exchange) abandon(err error) {
	x.mu.Lock()
	x.gone = err
	x.call.err = err
	x.rcall.err = err
	x.mu.Unlock()
}

// serveCalls is the dwell handler's side: it parks until the goroutines call, serves the calls,
// answers, and parks again, until the call that finishes the response. It returns the
// net/http handler's panic, if it panicked, for the dwell handler to raise.
func (x *exchange) serveCalls(c *core.Ctx) any {
	defer x.abandonOnPanic()
	for {
		if read, err := x.awaitCall(c); read {
			if err != nil {
				x.rcall.err = err // the wait for the body failed: the client left, or went quiet
			} else {
				x.serveCall(c, &x.rcall)
			}
			x.answer(true)
			continue
		}
		cl := &x.call
		switch cl.kind {
		case callFinish:
			return x.finish(c)
		case callHijack:
			if x.hijack(c, cl) {
				// The request goes on detached, and x is the goroutine's from the answer on:
				// it is never recycled (see Hijack).
				x.answer(false)
				return nil
			}
		default:
			x.serveCall(c, cl)
		}
		x.answer(false)
	}
}

// answer ends the call being served (the read lane's when read): its goroutine goes on with
// its result.
func (x *exchange) answer(read bool) {
	x.mu.Lock()
	if read {
		x.rpending = false
	} else {
		x.pending = false
	}
	x.mu.Unlock()
	if read {
		x.rdone <- struct{}{}
	} else {
		x.done <- struct{}{}
	}
}

// awaitCall parks the handler until a call can be served: the writer's call, first, or the
// reader's once the body has something for it (err: why the body will not). A pending read
// waits for the body in WaitBody, so that a write call can still wake the handler.
func (x *exchange) awaitCall(c *core.Ctx) (read bool, err error) {
	for {
		x.mu.Lock()
		if x.pending {
			x.mu.Unlock()
			return false, nil
		}
		if x.rpending && c.Seam().BodyReady() {
			x.mu.Unlock()
			return true, nil
		}
		reading := x.rpending
		x.waker = c.Waker()
		x.parked = true
		x.mu.Unlock()
		if reading {
			// The read waits for the client: the watch gives up the pool's place for it.
			x.watch(&x.rcall)
			err = c.Seam().WaitBody()
			x.unwatch()
			x.mu.Lock()
			x.parked = false
			x.mu.Unlock()
			if errors.Is(err, core.ErrOutsideRequest) { // not the handler's coroutine: it cannot park
				x.abandon(errNotInHandler)
				panic(errNotInHandler)
			}
			if err != nil {
				return true, err
			}
			// Woken by the body (over HTTP/1.1 it may be in the socket still, which BodyReady
			// cannot see, and ReadBody takes at once) or by a write call, which goes first.
			x.mu.Lock()
			write := x.pending
			x.mu.Unlock()
			return !write, nil
		}
		// Hold, not Suspend: the goroutine runs to its end whatever happens to the client,
		// and the handler must be there to answer it. A client that leaves cancels the
		// request's context, which is the goroutine's to watch, and fails the calls it makes
		// after that at once.
		if err := c.Seam().Hold(); errors.Is(err, core.ErrOutsideRequest) {
			x.abandon(errNotInHandler)
			panic(errNotInHandler)
		}
	}
}

// abandonOnPanic keeps the goroutines from waiting forever for a handler that panicked while
// serving a call (or that was not running as a handler at all). Such an exchange is never
// recycled. A call that waited for the client before the panic says so in its waited, and the
// goroutine takes its place in the pool again, as after any such call.
func (x *exchange) abandonOnPanic() {
	if v := recover(); v != nil {
		x.mu.Lock()
		if x.gone == nil {
			x.gone = errHandlerFailed
			x.call.err = errHandlerFailed
			x.rcall.err = errHandlerFailed
		}
		pending, rpending := x.pending, x.rpending
		x.mu.Unlock()
		if pending && x.call.kind != callFinish {
			x.done <- struct{}{}
		}
		if rpending {
			x.rdone <- struct{}{}
		}
		panic(v)
	}
}

// serveCall runs one call on the loop.
func (x *exchange) serveCall(c *core.Ctx, cl *call) {
	if cl.kind == callInterim {
		sendInterim(c, cl.status, cl.fields)
		cl.status = 0
		return
	}
	if cl.status != 0 {
		applyHead(c, cl.status, cl.fields, false)
		cl.status = 0
	}
	x.watch(cl)
	defer x.unwatch()
	switch cl.kind {
	case callWrite:
		cl.err = writeBoth(c, cl.out, cl.p)
		if cl.err == nil && cl.flush {
			cl.err = c.Flush()
		}
	case callRead:
		cl.n, cl.err = c.ReadBody(cl.p)
		if cl.err == nil && cl.n > 0 && c.Seam().BodyDone() {
			cl.err = io.EOF // spares the goroutine a call for the end alone
		}
		if cl.err == io.EOF && c.Seam().Chunked() {
			for name, value := range c.Trailers() {
				cl.trailers = append(cl.trailers, name, value)
			}
		}
	case callSendFile:
		if cl.err = writeBoth(c, cl.out, nil); cl.err == nil {
			cl.err = c.SendFile(cl.file, cl.off, cl.len)
		}
	}
}

// finish ends the response: the rest of the body goes out (the head first, if it has not),
// unless the net/http handler panicked: its panic is returned, for the dwell handler to raise
// as its own, which the server answers with a 500 or by cutting the response short. The
// exchange goes back to the pool.
func (x *exchange) finish(c *core.Ctx) any {
	cl := &x.call
	recycle := x.endReads()
	if v := cl.panicV; v != nil {
		if recycle {
			x.release()
		}
		return v
	}
	if cl.status != 0 {
		applyHead(c, cl.status, cl.fields, cl.implied)
	}
	for i := 0; i < len(cl.respTrailers); i += 2 {
		c.SetTrailer(cl.respTrailers[i], cl.respTrailers[i+1])
	}
	if len(cl.out) > 0 {
		c.Write(cl.out) // an error here is the client's leaving, which the server records
	}
	if recycle {
		x.release()
	} else if cap(cl.out) > 0 {
		bufpool.Put(cl.out)
		cl.out = nil
	}
	return nil
}

// endReads ends the read lane as the handler returns: a read still pending (a goroutine the
// handler started reads the body still) fails with errHandlerDone, and so does any later one.
// It reports whether the exchange may be recycled: not while a reading goroutine is between its
// call and its result, which it reads from the exchange.
func (x *exchange) endReads() bool {
	x.mu.Lock()
	if x.gone == nil {
		x.gone = errHandlerDone
	}
	pending := x.rpending
	if pending {
		x.rcall.err = errHandlerDone
		x.rpending = false
	}
	readers := x.readers
	x.mu.Unlock()
	if pending {
		x.rdone <- struct{}{}
	}
	return readers == 0
}

// release clears the exchange and puts it and its buffer back. It runs on the loop once the
// goroutine has handed over its last call, so nothing else refers to it.
func (x *exchange) release() {
	if cap(x.call.out) > 0 {
		bufpool.Put(x.call.out)
	}
	fields, params := x.fields[:0], x.params[:0]
	clear(x.fields)
	clear(x.params)
	headFields := x.call.fields[:0]
	clear(x.call.fields)
	trailers := x.rcall.trailers[:0]
	clear(x.rcall.trailers)
	respTrailers := x.call.respTrailers[:0]
	clear(x.call.respTrailers)
	*x = exchange{done: x.done, rdone: x.rdone, fields: fields, params: params,
		call:     call{fields: headFields, respTrailers: respTrailers},
		rcall:    call{trailers: trailers},
		watchdog: x.watchdog, watchdogLoop: x.watchdogLoop, onClientWait: x.onClientWait}
	exchanges.Put(x)
}

// writeBoth writes a then b to the response.
func writeBoth(c *core.Ctx, a, b []byte) error {
	if len(a) > 0 {
		if _, err := c.Write(a); err != nil {
			return err
		}
	}
	if len(b) > 0 {
		if _, err := c.Write(b); err != nil {
			return err
		}
	}
	return nil
}

// applyHead sets the response's header fields, replacing fields of the same names that a dwell
// middleware may have set (fields are sorted by name, case-insensitively), and its status unless
// implied.
func applyHead(c *core.Ctx, status int, fields []string, implied bool) {
	for i := 0; i < len(fields); i += 2 {
		if i == 0 || !strings.EqualFold(fields[i-2], fields[i]) {
			c.SetHeader(fields[i], fields[i+1])
		} else {
			c.AddHeader(fields[i], fields[i+1])
		}
	}
	if !implied {
		c.SetStatus(status)
	}
}

// sendInterim sends a 1xx response with fields and takes the fields away again: they belong to
// the interim response, and the final one has its own.
func sendInterim(c *core.Ctx, status int, fields []string) {
	for i := 0; i < len(fields); i += 2 {
		c.AddHeader(fields[i], fields[i+1])
	}
	c.SetStatus(status)
	for i := 0; i < len(fields); i += 2 {
		if i == 0 || !strings.EqualFold(fields[i-2], fields[i]) {
			c.DelHeader(fields[i])
		}
	}
}
