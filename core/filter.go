package core

import (
	"io"
)

// A BodyWriter takes a response's body bytes: the response itself, or a filter in front of it
// that Seam.WrapBody installed — a compressor, say — which writes what it makes to the
// BodyWriter behind it.
type BodyWriter = interface {
	io.Writer
	// Flush sends what was written so far on towards the client (see Ctx.Flush).
	Flush() error
	// Close ends the body: a filter writes out what it still holds and releases what it
	// uses. The server calls it once, when the handler (or its continuation) has finished.
	Close() error
}

// A Transparent body filter can tell that it leaves the body as it is — it has decided not to
// compress this response, say. SendFile then sends a file with sendfile(2), around the filter,
// instead of reading it through the filter's Write. SendFile asks the outermost filter; one with
// another filter behind it is transparent only if that one is too (the response itself is).
type Transparent interface {
	Transparent() bool
}
