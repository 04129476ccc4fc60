package serve

import (
	"errors"
	"fmt"
	"io"

	"github.com/dwellhttp/dwell/core/internal/wire"
)

// Errors a handler sees from Suspend, body reads and writes. Each names what ended the wait.
var (
	// ErrClosed means the connection is closed: for a request, the client went away (reset,
	// hang-up, or end of its input while the handler waited), and writes to it are lost; for a
	// connection handed over to another protocol, the calls made after it closed, or began to
	// (websocket.ErrClosed is this error).
	ErrClosed = errors.New("dwell: connection closed")
	// ErrShutdown means the server is shutting down and the grace period has ended.
	ErrShutdown = errors.New("dwell: server shutting down")
	// ErrTimeout means a deadline passed first: the timeout of a Suspend or a Detach, a body read
	// that made no progress for Options.BodyTimeout, or a write that made none for
	// Options.WriteTimeout.
	ErrTimeout = errors.New("dwell: timeout")
	// ErrDeadline means the request's own deadline (SetTimeout) passed: its waits end with it,
	// its writes fail with it, and its Context reports context.DeadlineExceeded. It is a
	// timeout: errors.Is(ErrDeadline, ErrTimeout) holds, while ErrDeadline != ErrTimeout tells a
	// request out of time from a wait whose own timeout passed.
	ErrDeadline = fmt.Errorf("dwell: the request's deadline passed: %w", ErrTimeout)
	// ErrServerClosed is returned by ListenAndServe and Serve after Shutdown.
	ErrServerClosed = errors.New("dwell: server closed")
	// ErrBodyTooLarge is returned by body reads once the body passes Options.MaxBodyBytes; the
	// server answers 413 if the handler has not started its response.
	ErrBodyTooLarge = errors.New("dwell: request body too large")
	// ErrBodyLength is returned by Write when the handler writes more than the Content-Length it
	// declared.
	ErrBodyLength = errors.New("dwell: response body longer than its declared Content-Length")
)

// A parkRefused is ErrOutsideRequest for a call that parks the handler — Ctx.Suspend, a
// Ctx.ReadBody that would have to wait, Ctx.SendFile, Seam.Hold, Seam.WaitBody — made by the
// request's own code outside the handler's coroutine: from its continuation, a hook or work on
// the loop's stack (Seam.OnLoopStack), none of which can park. Unlike the refusal of code that
// is not the request's, it is no misuse (a package of waits meets it as a matter of course, and
// does otherwise), so it is neither counted nor logged; and each call's is made once, so that
// it costs no allocation.
type parkRefused struct{ op string }

func (e *parkRefused) Error() string {
	return "dwell: Ctx." + e.op + " parks, and was called outside the handler's coroutine (from " +
		"its continuation or a hook, which cannot park): only the handler itself may park " +
		"(see core.Seam.MayPark)"
}

func (e *parkRefused) Unwrap() error { return ErrOutsideRequest }

// The refusals of the calls that park, made outside the handler's coroutine.
var (
	errSuspendRefused  error = &parkRefused{"Suspend"}
	errHoldRefused     error = &parkRefused{"Seam().Hold"}
	errWaitBodyRefused error = &parkRefused{"Seam().WaitBody"}
	ErrReadBodyRefused error = &parkRefused{"ReadBody"}
	errSendFileRefused error = &parkRefused{"SendFile"}
)

// parkRefusal returns the refusal of a park of kind k (Suspend's, Hold's or WaitBody's) made
// outside the handler's coroutine.
func parkRefusal(k parkKind) error {
	switch k {
	case parkHold:
		return errHoldRefused
	case ParkBody:
		return errWaitBodyRefused
	}
	return errSuspendRefused
}

// An errCode keeps one of the errors a request can end with in a byte, where an error value
// would take sixteen: the Ctx of every parked request carries two of them.
type errCode uint8

// codedErrors lists the errors that have a code, the code being the index.
var codedErrors = [...]error{
	nil, ErrClosed, ErrShutdown, ErrTimeout, ErrDeadline, ErrBodyTooLarge, io.ErrUnexpectedEOF, errBodyFailed,
	wire.ErrChunkSize, wire.ErrChunkOverflow, wire.ErrChunkExt, wire.ErrChunkLine, wire.ErrChunkCRLF, wire.ErrChunkLF, wire.ErrTrailer,
	wire.ErrTrailerSize,
}

// errBodyFailed stands for a body error without a code of its own (none is expected).
var errBodyFailed = errors.New("dwell: reading the request body failed")

// errOther is the code of an error outside codedErrors, which its holder keeps elsewhere.
const errOther = errCode(len(codedErrors))

func codeOf(err error) errCode {
	for i, e := range codedErrors {
		if e == err {
			return errCode(i)
		}
	}
	return errOther
}

func (c errCode) err() error {
	if c == errOther {
		return errBodyFailed
	}
	return codedErrors[c]
}

// ErrTunnelRefused is the Done.Err (and the Refusal.Err given to Options.WriteRefusal) of an
// HTTP/2 extended CONNECT whose handler answered 2xx without handing its stream over
// (Ctx.HandOver): the server answered 501 Not Implemented in its place, since a 2xx would
// tell the client that the tunnel it asked for was open.
var ErrTunnelRefused = errors.New("dwell: this resource opens no tunnel for an extended CONNECT")
