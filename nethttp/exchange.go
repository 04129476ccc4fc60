package nethttp

import (
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/internal/bufpool"
)

// An exchange is one request served by a net/http handler: what the loop collected for the
// handler's goroutine, and the calls that goroutine makes back to the loop, which alone may
// touch the request's Ctx.
//
// The dwell handler parks in Ctx.Hold while the goroutine runs. A call — read body bytes, write
// or flush response bytes, send a file, finish — is handed over under mu: the goroutine fills
// in call, marks it pending and wakes the parked handler through its Waker; the handler serves
// it on the loop (where it may park again, on a slow client or for body bytes) and answers on
// done; the goroutine waits on done, which is the backpressure. Only one call is ever in
// flight, so call needs no lock of its own: it belongs to whichever side holds the turn.
type exchange struct {
	h http.Handler

	// Collected on the loop before the goroutine starts; read only by the goroutine.
	method, target, proto, host, remote string
	contentLength                       int64
	chunked, hasBody                    bool
	fields                              []string // request header fields: name, value, name, ...
	params                              []string // route parameters: name, value, ...
	ctx                                 context.Context
	loop                                *core.Loop
	tls                                 *tls.ConnectionState // the connection's, over TLS (a copy)

	mu      sync.Mutex
	waker   core.Waker
	parked  bool  // the handler is in Hold, and waker ends it
	pending bool  // call waits for the handler
	gone    error // the handler can no longer answer calls (see abandon)
	done    chan struct{}

	call call

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
	x := &exchange{done: make(chan struct{}, 1)}
	x.onClientWait = x.clientWaits
	return x
}}

// do hands x.call to the handler and waits for its answer, which is in x.call on return. The
// handler answers every call, also once its client has gone (with the error that says so): its
// loop does not stop while it holds. A call that had to wait for the client gave up the
// exchange's place in the pool; do takes one again, waiting its turn if the pool is full.
func (x *exchange) do() {
	if x.post() {
		<-x.done
		if x.call.waited {
			x.call.waited = false
			httpWorkers.Rejoin(x.done)
		}
	}
}

// post makes x.call pending and wakes the handler if it is parked. It reports false, with the
// call's error set, when the handler can no longer answer.
func (x *exchange) post() bool {
	x.mu.Lock()
	if x.gone != nil {
		x.call.err = x.gone
		x.mu.Unlock()
		return false
	}
	x.pending = true
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
	x.mu.Unlock()
}

// serveCalls is the dwell handler's side: it parks until the goroutine calls, serves the call,
// answers, and parks again, until the call that finishes the response. It returns the
// net/http handler's panic, if it panicked, for the dwell handler to raise.
func (x *exchange) serveCalls(c *core.Ctx) any {
	defer x.abandonOnPanic()
	for {
		x.awaitCall(c)
		cl := &x.call
		switch cl.kind {
		case callFinish:
			return x.finish(c)
		case callHijack:
			if x.hijack(c, cl) {
				// The request goes on detached, and x is the goroutine's from the answer on:
				// it is never recycled (see Hijack).
				x.answer()
				return nil
			}
		default:
			x.serve(c, cl)
		}
		x.answer()
	}
}

// answer ends the call being served: the goroutine goes on with its result.
func (x *exchange) answer() {
	x.mu.Lock()
	x.pending = false
	x.mu.Unlock()
	x.done <- struct{}{}
}

// awaitCall parks the handler until a call is pending.
func (x *exchange) awaitCall(c *core.Ctx) {
	for {
		x.mu.Lock()
		if x.pending {
			x.mu.Unlock()
			return
		}
		x.waker = c.Waker()
		x.parked = true
		x.mu.Unlock()
		// Hold, not Suspend: the goroutine runs to its end whatever happens to the client,
		// and the handler must be there to answer it. A client that leaves cancels the
		// request's context, which is the goroutine's to watch, and fails the calls it makes
		// after that at once.
		if err := c.Hold(); err == core.ErrNotInHandler {
			x.abandon(errNotInHandler)
			panic(errNotInHandler)
		}
	}
}

// abandonOnPanic keeps the goroutine from waiting forever for a handler that panicked while
// serving a call (or that was not running as a handler at all). Such an exchange is never
// recycled. A call that waited for the client before the panic says so in its waited, and the
// goroutine takes its place in the pool again, as after any such call.
func (x *exchange) abandonOnPanic() {
	if v := recover(); v != nil {
		x.mu.Lock()
		if x.gone == nil {
			x.gone = errHandlerFailed
			x.call.err = errHandlerFailed
		}
		pending := x.pending
		x.mu.Unlock()
		if pending && x.call.kind != callFinish {
			x.done <- struct{}{}
		}
		panic(v)
	}
}

// serve runs one call on the loop.
func (x *exchange) serve(c *core.Ctx, cl *call) {
	if cl.kind == callInterim {
		sendInterim(c, cl.status, cl.fields)
		cl.status = 0
		return
	}
	if cl.status != 0 {
		applyHead(c, cl.status, cl.fields, false)
		cl.status = 0
	}
	x.watch()
	defer x.unwatch()
	switch cl.kind {
	case callWrite:
		cl.err = writeBoth(c, cl.out, cl.p)
		if cl.err == nil && cl.flush {
			cl.err = c.Flush()
		}
	case callRead:
		cl.n, cl.err = c.ReadBody(cl.p)
		if cl.err == nil && cl.n > 0 && c.BodyDone() {
			cl.err = io.EOF // spares the goroutine a call for the end alone
		}
		if cl.err == io.EOF && c.Chunked() {
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
	if v := cl.panicV; v != nil {
		x.release()
		return v
	}
	if cl.status != 0 {
		applyHead(c, cl.status, cl.fields, cl.implied)
	}
	if len(cl.out) > 0 {
		c.Write(cl.out) // an error here is the client's leaving, which the server records
	}
	x.release()
	return nil
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
	trailers := x.call.trailers[:0]
	clear(x.call.trailers)
	*x = exchange{done: x.done, fields: fields, params: params,
		call:     call{fields: headFields, trailers: trailers},
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
