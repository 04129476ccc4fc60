package serve

import (
	"errors"
	"strconv"

	"github.com/dwellhttp/dwell/core/internal/wire"
	"github.com/dwellhttp/dwell/internal/syntax"
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

	RefusalAnswer
}

// A RefusalAnswer is what a WriteRefusal hook set of a refusal's answer: the part of a Refusal
// that is not its public fields, a type of its own so that core's Refusal can hold it too.
type RefusalAnswer struct {
	fields      []string // name, value, name, value ...
	contentType string
	typeSet     bool
	body        []byte
}

// A RequestError is why the server refused a request before any handler ran: its status and a
// short reason ("missing Host header", "request header fields too large").
type RequestError struct {
	Status int
	Reason string
}

// Error returns the reason, in the words of the server's plain-text answer.
func (e *RequestError) Error() string { return "dwell: request refused: " + e.Reason }

// maxRefusalBody bounds a refusal's body: an error's explanation, not a page.
const maxRefusalBody = 16 << 10

// ErrRefusalTooLarge is what Refusal.Write returns past 16 KiB of body.
var ErrRefusalTooLarge = errors.New("dwell: a refusal's body is limited to 16 KiB")

// SetHeader sets a header field of the answer, replacing one of the same name. Content-Type replaces the server's text/plain;
// Content-Length, Transfer-Encoding, Connection and Date are the server's and are ignored. An
// invalid name or value panics, as for Ctx.SetHeader.
func (r *Refusal) SetHeader(name, value string) {
	k := kindOf(name)
	if k == fieldPlain {
		checkName(name)
	}
	CheckValue(name, value)
	switch k {
	case fieldContentType:
		r.contentType, r.typeSet = value, true
	case fieldPlain:
		for i := 0; i+1 < len(r.fields); i += 2 {
			if syntax.EqualFold(r.fields[i], name) {
				r.fields = append(r.fields[:i], r.fields[i+2:]...) // set, not added: one of a name
				break
			}
		}
		r.fields = append(r.fields, name, value)
	}
}

// Write adds p to the answer's body, up to 16 KiB in all (ErrRefusalTooLarge past it, and
// nothing of p is kept).
func (r *Refusal) Write(p []byte) (int, error) {
	if len(r.body)+len(p) > maxRefusalBody {
		return 0, ErrRefusalTooLarge
	}
	r.body = append(r.body, p...)
	return len(p), nil
}

// WriteString is Write for a string.
func (r *Refusal) WriteString(s string) (int, error) {
	if len(r.body)+len(s) > maxRefusalBody {
		return 0, ErrRefusalTooLarge
	}
	r.body = append(r.body, s...)
	return len(s), nil
}

// shape runs the application's WriteRefusal for r and reports whether it wrote the answer (a
// panic in it is logged, and the server's plain text answers instead).
func (l *Loop) shape(r *Refusal) (ok bool) {
	f := l.Opts.WriteRefusal
	if f == nil {
		return false
	}
	// The hook runs on the loop, not in the handler: it cannot park (current), and may read
	// the request's values (hooked, when no coroutine runs for the request).
	current, hooked := l.current, l.hooked
	l.current = nil
	if r.Ctx != nil && l.running.Load() == nil {
		l.hooked = r.Ctx
	}
	defer func() {
		l.current, l.hooked = current, hooked
		if v := recover(); v != nil {
			l.Log.Error("dwell: panic in WriteRefusal", "status", r.Status, "panic", v)
			ok = false
		}
	}()
	f(r)
	return true
}

// ShapeReject answers a request refused before its handler as the application's WriteRefusal
// writes it, and reports whether it did.
func (l *Loop) ShapeReject(c *Socket, rej *wire.Reject) bool {
	r := &Refusal{Status: rej.Status, Err: &RequestError{rej.Status, rej.Reason}}
	if !l.shape(r) {
		return false
	}
	writeShapedReject(c, r)
	return true
}

// writeShapedReject queues the answer to a request refused before its handler, as the
// application's WriteRefusal wrote it.
func writeShapedReject(c *Socket, r *Refusal) {
	l := c.Loop
	pool := &l.Pool
	n := 0
	for _, f := range r.fields {
		n += len(f) + 2
	}
	b := c.Out.Spare(pool, 160+len(r.contentType)+n+len(r.body))
	b = wire.AppendStatusLine(b, r.Status)
	b = append(b, "Date: "...)
	b = append(b, l.Clk.Date[:]...)
	b = append(b, "\r\n"...)
	if !r.typeSet {
		b = append(b, "Content-Type: text/plain; charset=utf-8\r\n"...)
	} else if r.contentType != "" {
		b = append(append(append(b, "Content-Type: "...), r.contentType...), "\r\n"...)
	}
	for i := 0; i+1 < len(r.fields); i += 2 {
		b = append(append(append(append(b, r.fields[i]...), ": "...), r.fields[i+1]...), "\r\n"...)
	}
	b = append(b, "Connection: close\r\nContent-Length: "...)
	b = strconv.AppendInt(b, int64(len(r.body)), 10)
	b = append(b, "\r\n\r\n"...)
	b = append(b, r.body...)
	c.Out.Filled(pool, b)
}

// shapedBody writes the fields and body of a refusal the application shaped into the
// response errorResponse prepared, and returns the body's length.
func (cx *Ctx) shapedBody(r *Refusal) int {
	if r.typeSet {
		cx.addField("Content-Type", r.contentType, fieldContentType)
	}
	for i := 0; i+1 < len(r.fields); i += 2 {
		cx.appendField(r.fields[i], r.fields[i+1])
	}
	if cx.ReqFlags&reqHead == 0 {
		cx.Carrier.Out.Write(&cx.Loop.Pool, r.body)
	}
	return len(r.body)
}
