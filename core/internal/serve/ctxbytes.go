package serve

import (
	"iter"

	"github.com/dwellhttp/dwell/internal/alias"
	"github.com/dwellhttp/dwell/internal/syntax"
)

// A RequestBytes is the zero-copy way to read a request: its methods are the Ctx's request
// reads without the copy, each value a slice of the request's own memory, as bufio.Scanner's
// Bytes is. A slice is borrowed: read it, never modify it, and copy what you keep; it is valid
// until the handler returns (across parks included) and is reused by a later request after
// that. In builds with the race detector a request's memory is never reused and is overwritten
// with the text "dwell:freed " when the request ends, so that a kept slice shows as that text
// in the first test that reads it. After the handler has detached, in its continuation, every
// read is empty, as the Ctx's are.
//
// A RequestBytes is a Ctx seen as bytes, a value of one word: Ctx.Bytes returns it without an
// allocation. Its methods check their caller as the Ctx's own do (see Ctx).
type RequestBytes struct{ cx *Ctx }

// Bytes returns the zero-copy view of the request (see RequestBytes): c.Bytes().Path() is the
// path without the copy Path makes. It checks nothing itself, and costs nothing: each of the
// view's methods checks its caller.
func (cx *Ctx) Bytes() RequestBytes { return RequestBytes{cx} }

// Method is Ctx.Method without the copy an uncommon method costs.
func (b RequestBytes) Method() []byte {
	cx := b.cx
	cx.check("Bytes().Method")
	return cx.Req.Bytes(cx.Req.Method)
}

// Path is Ctx.Path without the copy: the target's path, percent-decoded.
func (b RequestBytes) Path() []byte {
	cx := b.cx
	cx.check("Bytes().Path")
	return cx.Req.Bytes(cx.Req.Path)
}

// Header is Ctx.Header without the copy, and says whether the field is there: the value of the
// first header field named name (case-insensitive), and true; nil and false when there is
// none. A field sent with an empty value is there, its value empty.
func (b RequestBytes) Header(name string) ([]byte, bool) {
	cx := b.cx
	cx.check("Bytes().Header")
	return cx.Req.Lookup(name)
}

// HeaderValues iterates over the values of every header field named name (case-insensitive),
// in the order received: the read for a field that may be sent on several lines (Cookie,
// Accept, tracestate). The values of such a field are not split or joined: each line is one
// value, as received.
func (b RequestBytes) HeaderValues(name string) iter.Seq[[]byte] {
	// The caller is checked as the iteration begins, not here: so that this call stays small
	// enough to inline, and a loop over it allocates nothing.
	cx := b.cx
	return func(yield func([]byte) bool) {
		cx.check("Bytes().HeaderValues")
		r := &cx.Req
		for _, f := range r.Fields() {
			if f.Name.Len() == len(name) && syntax.EqualFold(BorrowString(r.Bytes(f.Name)), name) {
				if !yield(r.Bytes(f.Value)) {
					return
				}
			}
		}
	}
}

// Headers is Ctx.Headers without the copies: the request's header fields in the order
// received, names as sent and values trimmed of surrounding whitespace.
func (b RequestBytes) Headers() iter.Seq2[[]byte, []byte] {
	// The caller is checked as the iteration begins, not here: so that this call stays small
	// enough to inline, and a loop over it allocates nothing.
	cx := b.cx
	return func(yield func([]byte, []byte) bool) {
		cx.check("Bytes().Headers")
		r := &cx.Req
		for _, f := range r.Fields() {
			if !yield(r.Bytes(f.Name), r.Bytes(f.Value)) {
				return
			}
		}
	}
}

// Query is Ctx.Query without the copy, and says whether the parameter is there: the first
// value of the query parameter name, decoded ('+' is a space), and true; nil and false when
// there is none. A parameter sent without a value ("?a" or "?a=") is there, its value empty.
func (b RequestBytes) Query(name string) ([]byte, bool) {
	cx := b.cx
	cx.check("Bytes().Query")
	return cx.Req.QueryValue(name)
}

// QueryValues iterates over every value of the query parameter name, decoded, in the order
// received.
func (b RequestBytes) QueryValues(name string) iter.Seq[[]byte] {
	// The caller is checked as the iteration begins, not here: so that this call stays small
	// enough to inline, and a loop over it allocates nothing.
	cx := b.cx
	return func(yield func([]byte) bool) {
		cx.check("Bytes().QueryValues")
		for v := range cx.Req.QueryValues(name) {
			if !yield(v) {
				return
			}
		}
	}
}

// Param is Ctx.Param without the copy: the value of the route parameter name, as set by the
// router that matched the request, or nil.
func (b RequestBytes) Param(name string) []byte { return b.cx.checkedParam("Bytes().Param", name) }

// checkedParam returns the value of the route parameter name, nil when there is none, for the
// Ctx's method op once it has checked its caller. Ctx.Param stays small enough to inline, so
// that its string conversion, in the caller, can use the caller's stack when the string does
// not escape.
func (cx *Ctx) checkedParam(op, name string) []byte {
	cx.check(op)
	if cx.Extra == nil {
		return nil
	}
	for _, p := range cx.Extra.params {
		if p.Key == name {
			// The value is a substring of the request's path, in its arena: viewing it as bytes
			// exposes no memory but the request's own, which the caller may not change.
			return alias.Bytes(p.Value)
		}
	}
	return nil
}
