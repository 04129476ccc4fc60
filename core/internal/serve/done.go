package serve

import (
	"errors"
	"fmt"
	"time"
)

// Done describes a finished response, for access logs and metrics: what really went out,
// whoever wrote it — the handler, its continuation, or the server itself (a 400, 408 or 413
// for a request body that failed, a 503 at shutdown, a 500 after a panic).
type Done struct {
	// Status is the response's status code. For a response that never went out (the client
	// left first, or the handler aborted it before it started) it is the status the response
	// had when it ended.
	Status int
	// Bytes is the number of body bytes the response carried, after any body filter.
	Bytes int64
	// Duration is the time from the request's head being read to the response being
	// complete (queued whole for the client).
	Duration time.Duration
	// Time is when the response was complete: the time of an access log's line, read once for
	// every hook.
	Time time.Time
	// Err says why the response did not end normally: ErrClosed (the client left), ErrShutdown (the
	// grace period of a shutdown ended), ErrDeadline (SetTimeout), ErrTimeout, a request body error
	// (ErrBodyTooLarge, io.ErrUnexpectedEOF, a malformed chunked body) that the server answered,
	// ErrAbortHandler, a PanicError, or ErrTunnelRefused (a 2xx to an HTTP/2 extended CONNECT
	// from a handler that did not hand the stream over, answered 501). It is nil for a response
	// that went out whole.
	//
	// A request that handed its connection over (Ctx.HandOver) and was still under way when the
	// connection ended (a WebSocket handler that reads until the close) reports how it ended:
	// nil when its Protocol closed it (a close handshake completed), or the error the Protocol
	// gave (Conn.SetErr: a client that broke the protocol, a ping unanswered); ErrClosed when
	// the client left without a word (a reset, a vanished client); ErrTimeout, ErrShutdown,
	// ErrInputFull when the connection ended for them; ErrProtocolPanic when a method of its
	// Protocol panicked.
	Err error
}

// OnDone registers f to run once the response is complete, on the request's loop, after the
// handler (and its continuation) and after any error response of the server's own. Hooks run
// in the order registered. The request's values are gone by then (see Ctx): a hook that needs
// them captures them before. f must not block.
func (cx *Ctx) OnDone(f func(Done)) {
	cx.check("OnDone")
	r := cx.rare()
	r.onDone = append(r.onDone, f)
}

// A PanicError is the Done.Err of a response whose handler (or continuation) panicked.
type PanicError struct {
	Value any // what the handler panicked with
}

// Error says that the handler panicked, and with what.
func (e *PanicError) Error() string { return fmt.Sprintf("dwell: handler panicked: %v", e.Value) }

// ErrAbortHandler is a sentinel panic value that aborts a response, as net/http's
// http.ErrAbortHandler does: panic(core.ErrAbortHandler) in a handler or continuation ends
// the request at once without logging a stack. If the response has started, the client sees
// it cut short — no final chunk, or a connection reset for a body delimited by the close — so
// that no proxy or cache takes it for complete; if it has not, the connection closes without
// a response.
var ErrAbortHandler = errors.New("dwell: handler aborted its response")

// runDone calls the completion hooks (RunDone) with the response's outcome.
func (cx *Ctx) runDone() {
	r := cx.Extra.Rare
	now, mono := cx.Loop.Clk.Wall()
	d := Done{
		Status:   cx.StatusCode(),
		Bytes:    cx.Written,
		Duration: time.Duration(mono - cx.start),
		Time:     now,
		Err:      cx.outcome(),
	}
	if cx.NoBody() {
		d.Bytes = 0 // a HEAD's counted for the Content-Length, a 204's or 304's dropped: none sent
	}
	// The hooks are the request's own code, run by the loop's goroutine: they may use cx.
	l := cx.Loop
	l.hooked = cx
	for _, f := range r.onDone {
		l.safely(func() { f(d) })
	}
	l.hooked = nil
}

// outcome returns the Done.Err of the request.
func (cx *Ctx) outcome() error {
	r := cx.Extra.Rare
	end, handed := r.answered.(*handedEnd)
	switch {
	case r.panicV == ErrAbortHandler:
		return ErrAbortHandler
	case r.panicV != nil:
		return &PanicError{r.panicV}
	case handed:
		// The connection it handed over ended, as recorded then (see handover.go): the
		// ErrClosed its close then woke the handler with is no more than the close.
		return end.err
	case cx.Gone != 0:
		return cx.Gone.err()
	case cx.Carrier == nil || cx.Carrier.State == StClosed:
		return ErrClosed
	}
	return r.answered
}
