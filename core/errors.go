package core

import (
	"time"

	"github.com/dwellhttp/dwell/core/internal/serve"
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

// A PanicError is the Done.Err of a response whose handler (or continuation) panicked, as a
// *PanicError: a struct whose one field, Value any, is what the handler panicked with.
type PanicError = serve.PanicError

// The errors the server returns, and the values it panics with; errors.Is tells them apart.
var (
	// ErrAbortHandler is a sentinel panic value that aborts a response, as net/http's
	// http.ErrAbortHandler does: panic(core.ErrAbortHandler) in a handler or continuation ends
	// the request at once without logging a stack. If the response has started, the client sees
	// it cut short — no final chunk, or a connection reset for a body delimited by the close — so
	// that no proxy or cache takes it for complete; if it has not, the connection closes without
	// a response.
	ErrAbortHandler = serve.ErrAbortHandler

	// ErrClosed means the connection is closed: for a request, the client went away (reset,
	// hang-up, or end of its input while the handler waited), and writes to it are lost; for a
	// connection handed over to another protocol, the calls made after it closed, or began to
	// (websocket.ErrClosed is this error).
	ErrClosed = serve.ErrClosed

	// ErrShutdown means the server is shutting down and the grace period has ended.
	ErrShutdown = serve.ErrShutdown

	// ErrTimeout means a deadline passed first: the timeout of a Suspend or a Detach, a body read
	// that made no progress for Options.BodyTimeout, or a write that made none for
	// Options.WriteTimeout.
	ErrTimeout = serve.ErrTimeout

	// ErrDeadline means the request's own deadline (SetTimeout) passed: its waits end with it,
	// its writes fail with it, and its Context reports context.DeadlineExceeded. It is a
	// timeout: errors.Is(ErrDeadline, ErrTimeout) holds, while ErrDeadline != ErrTimeout tells a
	// request out of time from a wait whose own timeout passed.
	ErrDeadline = serve.ErrDeadline

	// ErrServerClosed is returned by ListenAndServe and Serve after Shutdown.
	ErrServerClosed = serve.ErrServerClosed

	// ErrBodyTooLarge is returned by body reads once the body passes Options.MaxBodyBytes; the
	// server answers 413 if the handler has not started its response.
	ErrBodyTooLarge = serve.ErrBodyTooLarge

	// ErrBodyLength is returned by Write when the handler writes more than the Content-Length it
	// declared.
	ErrBodyLength = serve.ErrBodyLength

	// ErrTunnelRefused is the Done.Err (and the Refusal.Err given to Options.WriteRefusal) of an
	// HTTP/2 extended CONNECT whose handler answered 2xx without handing its stream over
	// (Ctx.HandOver): the server answered 501 Not Implemented in its place, since a 2xx would
	// tell the client that the tunnel it asked for was open.
	ErrTunnelRefused = serve.ErrTunnelRefused

	// ErrInputFull closes a handed-over connection whose Protocol takes none of the bytes that fill
	// the loop's read buffer: it can make no progress.
	ErrInputFull = serve.ErrInputFull

	// ErrProtocolPanic is what Closed hears when one of the Protocol's own methods panicked: the
	// panic is logged and the connection closed at once, as Abort closes it (an HTTP/2 stream is
	// reset, INTERNAL_ERROR), so that a protocol whose state is now unknown is not called again
	// with the client's next bytes. The server goes on serving the other connections.
	ErrProtocolPanic = serve.ErrProtocolPanic

	// ErrHandOverHTTP2 is what HandOver (and HandOverConn) return for a request on an HTTP/2
	// stream other than an extended CONNECT's: its connection carries other streams, and is not the
	// request's to give. (The net/http bridge's Hijack answers http.ErrNotSupported then, as
	// net/http's does over HTTP/2.)
	ErrHandOverHTTP2 = serve.ErrHandOverHTTP2

	// ErrOutsideRequest is returned (or, by the methods that return no error, panicked with,
	// wrapped) when a Ctx is used by code that is not its request's own: after the request
	// ended — the Ctx may by then serve another request, which such a call must never touch — or
	// from a goroutine other than the handler's, or from a Loop.Post callback, a timer or another
	// request's handler while it is parked. Hand blocking work to wait.Do, wake a parked handler
	// with a Waker, and run code on the loop with Loop.Post; only the handler, its continuation
	// and its hooks may use the Ctx itself.
	//
	// The calls that park the handler (Suspend, a ReadBody that would have to wait, SendFile,
	// Seam.Hold, Seam.WaitBody) return it as well, wrapped with their name, when the request's own
	// code makes them outside the handler's coroutine: from its continuation or a hook, which
	// cannot park. That refusal is neither counted nor logged, since a package whose calls park
	// when they can meets it as a matter of course (Seam.MayPark says beforehand which it will be).
	ErrOutsideRequest = serve.ErrOutsideRequest

	// ErrRefusalTooLarge is what Refusal.Write returns past 16 KiB of body.
	ErrRefusalTooLarge = serve.ErrRefusalTooLarge

	// ErrBodyNotAllowed is returned by Write for a response that cannot have a body (204, 304).
	// Writes to a HEAD response are counted, for its Content-Length, and not sent (with nothing
	// written it has none: it would have to be GET's, which the server cannot know).
	ErrBodyNotAllowed = serve.ErrBodyNotAllowed
)
