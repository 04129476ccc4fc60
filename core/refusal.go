package core

import (
	"github.com/dwellhttp/dwell/core/internal/serve"
	"github.com/dwellhttp/dwell/internal/alias"
)

// A Refusal is one of the server's own answers, which Options.WriteRefusal writes, or one a
// handler or middleware asks for with Ctx.Refuse: its status and why, and the header fields and
// body the application gives it. The status, the framing (Content-Length, Transfer-Encoding),
// Date and Connection stay the server's — the connection closes after the server's own
// refusals, whose request's end may be unknown, and stays open after a Ctx.Refuse — and the
// fields a middleware set before the handler ran (a request id, CORS) stay on it.
type Refusal struct {
	// Status is the answer's status code.
	Status int
	// Err says what was wrong: a *RequestError for a request refused before any handler ran;
	// ErrBodyTooLarge, ErrTimeout, a malformed chunked body or io.ErrUnexpectedEOF for a body
	// that failed; ErrDeadline or ErrShutdown for a 503; a *PanicError for a 500;
	// ErrTunnelRefused for a 501 to an HTTP/2 extended CONNECT no handler handed over; what the
	// caller of Ctx.Refuse gave (router.ErrNotFound, middleware.ErrRateLimited, a session
	// error).
	Err error
	// Ctx is the request's, when a handler ran (nil for a request refused before): for the
	// values a middleware set (middleware.RequestID), read-only — its response is this one.
	Ctx *Ctx

	//lint:ignore U1000 serve's methods use it: the Refusal is serve's, read as core's (alias.As)
	answer serve.RefusalAnswer
}

// A RequestError is why the server refused a request before any handler ran, as a
// *RequestError: a struct of two fields, Status int, the refusal's status, and Reason string,
// a short reason ("missing Host header", "request header fields too large").
type RequestError = serve.RequestError

// StatusText returns the reason phrase of an HTTP status code (RFC 9110 §15), or "" when the
// code has none registered.
func StatusText(code int) string {
	return serve.StatusText(code)
}

// SetHeader sets a header field of the answer, replacing one of the same name. Content-Type replaces the server's text/plain;
// Content-Length, Transfer-Encoding, Connection and Date are the server's and are ignored. An
// invalid name or value panics, as for Ctx.SetHeader.
func (r *Refusal) SetHeader(name, value string) {
	alias.As[*serve.Refusal](r).SetHeader(name, value)
}

// Write adds p to the answer's body, up to 16 KiB in all (ErrRefusalTooLarge past it, and
// nothing of p is kept).
func (r *Refusal) Write(p []byte) (int, error) {
	return alias.As[*serve.Refusal](r).Write(p)
}

// WriteString is Write for a string.
func (r *Refusal) WriteString(s string) (int, error) {
	return alias.As[*serve.Refusal](r).WriteString(s)
}
