package serve

import "io"

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

// WrapBody puts a filter in front of the response body: wrap receives the BodyWriter the
// filter writes to, and returns the filter. From then on the handler's Write, WriteString,
// Flush and SendFile go through the filter; the server calls its Close when the handler (or
// its continuation) finishes, before completing the response. A later WrapBody wraps the
// filters already there. Install a filter before the body's first byte is written. A filter
// that implements Transparent can let SendFile go around it.
//
// The writer behind a filter keeps the response's backpressure: its Write parks the handler
// while the client is slow, exactly as Ctx.Write does. A filter that changes the body's length
// or encoding sets the header fields that say so (Content-Encoding, and no Content-Length)
// before its first write reaches the response. When the server replaces the response with an
// error of its own (a request body that broke, say), it drops the filter without closing it.
func (s Seam) WrapBody(wrap func(next BodyWriter) BodyWriter) {
	cx := s.cx
	cx.check("Seam().WrapBody")
	r := cx.rare()
	next := r.filter
	if next == nil {
		next = (*rawBody)(cx)
	}
	r.filter = wrap(next)
}

// closeFilter closes the body filter, if any, once the handler or its continuation is done.
// A failure of the filter's own closes the connection: the body it was making is incomplete.
func (cx *Ctx) closeFilter() {
	f := cx.filter()
	if f == nil {
		return
	}
	cx.Extra.Rare.filter = nil
	if err := f.Close(); err != nil && cx.Resp&RfCommitted != 0 {
		cx.Resp |= RfAbort | RfClose
	}
}

// rawBody is the response body itself, as the BodyWriter behind the first filter. Being a
// pointer, it fits in an interface without an allocation.
type rawBody Ctx

func (b *rawBody) Write(p []byte) (int, error) {
	if cx := (*Ctx)(b); !cx.owned() {
		return 0, cx.misused("Write")
	}
	return (*Ctx)(b).writeBody(p)
}

func (b *rawBody) Flush() error {
	if cx := (*Ctx)(b); !cx.owned() {
		return cx.misused("Flush")
	}
	return (*Ctx)(b).flushBody()
}
func (b *rawBody) Close() error      { return nil }
func (b *rawBody) Transparent() bool { return true }
