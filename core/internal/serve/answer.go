package serve

import (
	"context"
	"io"
	"log/slog"
	"runtime/debug"
	"strconv"

	"github.com/dwellhttp/dwell/core/internal/wire"
)

// The server's own answers: for a handler that returned without responding to a request that
// went wrong, for a panic, and for a request refused before any handler ran.

// serverAnswer answers for a handler that returned without starting its response when the request
// went wrong meanwhile: 503 once the request's deadline passed (replacing whatever the handler
// prepared), or, when the handler wrote nothing, 503 after a shutdown ended its wait (its grace
// period, or the notice of WakeOnShutdown), and for a request body that failed 400 (broken framing,
// or a body cut short), 413 (over the size limit) or 408 (a body that stopped coming). The
// connection closes after such an answer, since the body's end is unknown.
func (cx *Ctx) serverAnswer() {
	gone := cx.Gone.err()
	if gone == ErrDeadline {
		cx.ServerError(503, "the request timed out", ErrDeadline)
		return
	}
	if cx.Status != 0 || cx.Written != 0 {
		return // the handler answered
	}
	if gone == ErrShutdown || cx.parkf&parkShutdownTold != 0 {
		cx.ServerError(503, "the server is shutting down", ErrShutdown)
		return
	}
	err := cx.bodyErr()
	if err == nil {
		return
	}
	status := 0
	switch e := err.(type) {
	case *wire.FramingError:
		status = e.StatusCode()
	default:
		switch err {
		case ErrBodyTooLarge:
			status = 413
		case ErrTimeout:
			status = 408
		case io.ErrUnexpectedEOF:
			status = 400 // the client stopped sending before the end of the body it declared
		}
	}
	if status != 0 {
		cx.ServerError(status, err.Error(), err)
	}
}

// ServerError is errorResponse for the server's own answers, which its statistics count.
func (cx *Ctx) ServerError(status int, msg string, err error) {
	cx.Loop.Refused(status)
	cx.errorResponse(status, msg, err)
}

// errorResponse replaces whatever the handler prepared with a plain-text error and closes the
// connection after it. The header fields that do not describe the content — a request id, CORS
// fields a middleware set — are kept; a body filter is dropped. err is the Done.Err the
// response reports.
func (cx *Ctx) errorResponse(status int, msg string, err error) {
	c := cx.Carrier
	pool := &cx.Loop.Pool
	cx.dropRepresentation()
	if x := cx.Extra; x != nil && x.Rare != nil {
		x.Rare.filter = nil
		x.Rare.answered = err
	}
	c.Out.DropAfterHead(pool)
	cx.Resp = RfClose
	cx.Status = uint16(status)
	c.Out.ReserveHead(&c.Loop.Pool)
	if cx.Loop.Opts.WriteRefusal != nil {
		if err == nil && status == 500 {
			err = &PanicError{cx.rare().panicV}
		}
		r := &Refusal{Status: status, Err: err, Ctx: cx}
		if cx.Loop.shape(r) {
			cx.Written = int64(cx.shapedBody(r))
			return
		}
	}
	text := strconv.Itoa(status) + " " + StatusText(status) + ": " + msg + "\n"
	if cx.ReqFlags&reqHead == 0 {
		c.Out.Write(pool, []byte(text))
	}
	cx.Written = int64(len(text))
}

// handlerPanic logs a handler's panic (or its runtime.Goexit, as errGoexit) and answers 500 if
// the response has not started — through the request's OnPanic responder, if it has one; if
// the response has started, it is aborted, so that the client sees it cut. A panic with
// ErrAbortHandler aborts without logging.
func (l *Loop) handlerPanic(cx *Ctx, r any) {
	if r != ErrAbortHandler {
		if CountStats {
			l.Ctr.panics++
		}
		l.Log.Error("dwell: panic in handler", "method", string(cx.Req.Bytes(cx.Req.Method)),
			"target", string(cx.Req.Bytes(cx.Req.Target)), "panic", r, "stack", string(debug.Stack()))
	}
	x := cx.rare()
	x.panicV = r
	x.filter = nil // a filter must not add to a response that failed
	if cx.Carrier == nil || cx.Carrier.State == StClosed {
		return
	}
	if r == ErrAbortHandler || cx.Resp&RfCommitted != 0 {
		cx.Resp |= RfAbort | RfClose
		return
	}
	cx.errorResponse(500, "the handler failed", nil)
	if f := x.onPanic; f != nil {
		cx.respondToPanic(f, r)
	}
}

// respondToPanic lets the request's OnPanic responder replace the server's 500. It runs where
// the panic was recovered, but cannot park there: its writes queue.
func (cx *Ctx) respondToPanic(f func(*Ctx, any), v any) {
	cx.Carrier.Out.DropAfterHead(&cx.Loop.Pool)
	cx.Status, cx.Written = 0, 0
	current := cx.Loop.current
	cx.Loop.current = nil
	defer func() {
		cx.Loop.current = current
		r := recover()
		switch {
		case r != nil && cx.Resp&RfCommitted != 0:
			cx.Resp |= RfAbort
		case r != nil, cx.Status == 0 && cx.Written == 0:
			cx.errorResponse(500, "the handler failed", nil) // the responder failed, or said nothing
		}
		if r != nil {
			cx.Loop.Log.Error("dwell: panic in an OnPanic responder", "panic", r)
		}
		cx.Resp |= RfClose
	}()
	f(cx, v)
}

// OnPanic makes f answer for a panic of the handler (or of its continuation), in place of the
// server's plain-text 500: for a recover middleware that answers in JSON, say. f runs once the
// panic has been recovered and logged, and only when the response has not started (a started
// one is cut short instead, see ErrAbortHandler); it writes a response as a handler does,
// except that it cannot park. The header fields set before the panic stay, those describing
// the content aside. The connection closes after the response. A later OnPanic replaces f.
func (s Seam) OnPanic(f func(c *Ctx, v any)) {
	s.cx.check("Seam().OnPanic")
	s.cx.rare().onPanic = f
}

// DebugEnabled reports whether the loop's logger takes debug records, so that the values of
// one (a getpeername call for the client's address, say) are computed only when it does.
func (l *Loop) DebugEnabled() bool { return l.Log.Enabled(context.Background(), slog.LevelDebug) }
