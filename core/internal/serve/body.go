package serve

import (
	"io"

	"github.com/dwellhttp/dwell/core/internal/wire"
)

// bodyState is the framing of the current request's body: how much is left and what went wrong.
// The loop still needs it after the handler returns, to skip what the handler did not read.
type bodyState struct {
	Remaining  int64                // BodyLength: bytes not yet consumed
	Chunked    *wire.ChunkedDecoder // BodyChunked: the decoder, from the loop's pool
	Kind       bodyKind
	EOF        bool
	Waiting100 bool    // the client sent Expect: 100-continue and no 100 has been sent yet
	Failed     errCode // sticky: a framing error, the size limit, a timeout, the client gone
}

type bodyKind uint8

const (
	BodyNone bodyKind = iota
	BodyLength
	bodyChunked
	BodyStream // an HTTP/2 request without a Content-Length: the stream's end ends it
)

// begin sets up the framing of r's body (RFC 9112 §6.3): chunked, a Content-Length, or none.
// A declared length over MaxBodyBytes fails the body at once, before any of it is read and
// without a 100 Continue; the handler still runs (its middleware sees the request), and gets
// ErrBodyTooLarge from any read.
func (b *bodyState) Begin(l *Loop, r *wire.Request) {
	*b = bodyState{}
	max := l.Opts.MaxBodyBytes
	switch {
	case r.Has(wire.Chunked):
		b.Kind = bodyChunked
		b.Chunked = l.getChunked()
		b.Chunked.Reset(max)
	case r.ContentLength > 0:
		b.Kind = BodyLength
		b.Remaining = r.ContentLength
		if max > 0 && r.ContentLength > max {
			b.Failed = codeOf(ErrBodyTooLarge)
			return
		}
	default:
		b.Kind = BodyNone
	}
	b.Waiting100 = r.Has(wire.Expect100) && b.Kind != BodyNone
}

// end releases the decoder once the request is over.
func (b *bodyState) end(l *Loop) {
	if b.Chunked != nil {
		l.putChunked(b.Chunked)
		b.Chunked = nil
	}
	b.Kind = BodyNone
}

// Complete reports whether the whole body has been consumed.
func (b *bodyState) Complete() bool {
	switch b.Kind {
	case BodyLength:
		return b.Remaining == 0
	case bodyChunked, BodyStream:
		return b.EOF
	}
	return true
}

// err returns the sticky error, or nil.
func (b *bodyState) err() error { return b.Failed.err() }

// Decode moves body bytes from src into dst (nil dst discards them) and reports how many bytes of
// each it used; err is io.EOF at the end of the body, or a framing error, which the caller makes
// sticky (Ctx.FailBody) when it reads for the handler; a discarding caller ends the connection.
func (b *bodyState) Decode(dst, src []byte) (nd, ns int, err error) {
	if b.Failed != 0 {
		return 0, 0, b.err()
	}
	switch b.Kind {
	case BodyLength:
		n := int(min(int64(len(src)), b.Remaining))
		if dst != nil {
			n = min(n, len(dst))
			copy(dst, src[:n])
		}
		b.Remaining -= int64(n)
		nd, ns = n, n
		if b.Remaining == 0 {
			err = io.EOF
		}
	case bodyChunked:
		nd, ns, err = b.Chunked.Decode(dst, src)
		switch err {
		case io.EOF:
			b.EOF = true
		case wire.ErrTooLarge:
			err = ErrBodyTooLarge
		}
	default:
		err = io.EOF
	}
	return nd, ns, err
}

func (l *Loop) getChunked() *wire.ChunkedDecoder {
	if n := len(l.chunkedFree); n > 0 {
		d := l.chunkedFree[n-1]
		l.chunkedFree = l.chunkedFree[:n-1]
		return d
	}
	return new(wire.ChunkedDecoder)
}

func (l *Loop) putChunked(d *wire.ChunkedDecoder) {
	if d.TrailerCap() > wire.MaxTrailerSize || len(l.chunkedFree) >= 64 {
		return
	}
	d.Reset(0)
	l.chunkedFree = append(l.chunkedFree, d)
}
