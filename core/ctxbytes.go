package core

import (
	"iter"

	"github.com/dwellhttp/dwell/core/internal/serve"
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
type RequestBytes struct{ x serve.RequestBytes }

// Method is Ctx.Method without the copy an uncommon method costs.
func (b RequestBytes) Method() []byte {
	return b.x.Method()
}

// Path is Ctx.Path without the copy: the target's path, percent-decoded.
func (b RequestBytes) Path() []byte {
	return b.x.Path()
}

// Header is Ctx.Header without the copy, and says whether the field is there: the value of the
// first header field named name (case-insensitive), and true; nil and false when there is
// none. A field sent with an empty value is there, its value empty.
func (b RequestBytes) Header(name string) ([]byte, bool) {
	return b.x.Header(name)
}

// HeaderValues iterates over the values of every header field named name (case-insensitive),
// in the order received: the read for a field that may be sent on several lines (Cookie,
// Accept, tracestate). The values of such a field are not split or joined: each line is one
// value, as received.
func (b RequestBytes) HeaderValues(name string) iter.Seq[[]byte] {
	return b.x.HeaderValues(name)
}

// Headers is Ctx.Headers without the copies: the request's header fields in the order
// received, names as sent and values trimmed of surrounding whitespace.
func (b RequestBytes) Headers() iter.Seq2[[]byte, []byte] {
	return b.x.Headers()
}

// Query is Ctx.Query without the copy, and says whether the parameter is there: the first
// value of the query parameter name, decoded ('+' is a space), and true; nil and false when
// there is none. A parameter sent without a value ("?a" or "?a=") is there, its value empty.
func (b RequestBytes) Query(name string) ([]byte, bool) {
	return b.x.Query(name)
}

// QueryValues iterates over every value of the query parameter name, decoded, in the order
// received.
func (b RequestBytes) QueryValues(name string) iter.Seq[[]byte] {
	return b.x.QueryValues(name)
}

// Param is Ctx.Param without the copy: the value of the route parameter name, as set by the
// router that matched the request, or nil.
func (b RequestBytes) Param(name string) []byte {
	return b.x.Param(name)
}
