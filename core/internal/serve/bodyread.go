package serve

import (
	"errors"
	"io"
	"iter"

	"github.com/dwellhttp/dwell/internal/syntax"
)

// ReadBody reads request body bytes into p, as an io.Reader does: it returns what has arrived,
// parking the handler until some does, and io.EOF after the last byte (and the trailers of a
// chunked body). When nothing is buffered it reads the socket straight into p. Package body
// builds on it: body.Reader is the io.Reader, body.ReadAll reads a whole body under a limit.
//
// A client that sent Expect: 100-continue gets its 100 Continue on the first ReadBody, so a
// handler that refuses the request without reading never makes it send the body.
//
// Errors are sticky: ErrBodyTooLarge past Options.MaxBodyBytes or Seam.LimitBody (at once,
// before any byte, for a declared length over it), a malformed chunked body,
// io.ErrUnexpectedEOF when the client stops mid-body, ErrTimeout after Options.BodyTimeout
// without progress, ErrDeadline once the request's deadline has passed, ErrClosed or
// ErrShutdown. ReadBody may park only in the handler itself: from a continuation it returns
// ErrOutsideRequest when it would have to wait, which is not sticky.
func (cx *Ctx) ReadBody(p []byte) (int, error) {
	if !cx.owned() {
		return 0, cx.misused("ReadBody")
	}
	b := &cx.Body
	if b.Failed != 0 {
		return 0, cx.bodyErr()
	}
	if cx.State == CtxIdle || b.Complete() {
		return 0, io.EOF
	}
	if len(p) == 0 {
		return 0, nil
	}
	cx.send100()
	for {
		n, err := cx.Exchange.ReadBody(cx, p)
		switch {
		case err == ErrReadAgain:
		case err == ErrReadBodyRefused, err == io.EOF:
			return 0, err
		case err != nil:
			return n, cx.FailBody(err)
		case n > 0:
			return n, nil
		}
	}
}

// send100 answers Expect: 100-continue once the handler wants the body, unless its response
// has started.
func (cx *Ctx) send100() {
	if b := &cx.Body; b.Waiting100 {
		b.Waiting100 = false
		if cx.Resp&RfCommitted == 0 {
			cx.Exchange.SendContinue()
		}
	}
}

// BodyReady reports whether Ctx.ReadBody would return without parking for the client: bytes of the
// body have arrived that it has not returned, or the body has ended or failed, or the client
// has gone. (Over HTTP/1.1, bytes still in the socket are not seen: WaitBody waits for them.)
func (s Seam) BodyReady() bool {
	s.cx.check("Seam().BodyReady")
	return s.cx.bodyReady()
}

// bodyReady is BodyReady, for a caller that has checked its own.
func (cx *Ctx) bodyReady() bool {
	c := cx.Carrier
	b := &cx.Body
	switch {
	case cx.State == CtxIdle, b.Failed != 0, b.Complete(), c.State == StClosed, c.PeerEOF, cx.Gone != 0:
		return true
	}
	return cx.Exchange.HasInput()
}

// WaitBody parks the handler until body bytes arrive (or the body ends, or fails), a Waker
// wakes it, or the client leaves; it returns at once when BodyReady. A client that sent
// Expect: 100-continue gets its 100 Continue, as from Ctx.ReadBody. It is for a handler that
// reads the body while it waits for other work: a bridge serving a reading and a writing
// goroutine at once, which must not sit in ReadBody while a write waits. It returns what the
// Waker passed, nil when the body ended the wait, ErrClosed (or ErrShutdown) when the client
// left, and ErrOutsideRequest outside the handler itself.
func (s Seam) WaitBody() error {
	cx := s.cx
	if !cx.owned() {
		return cx.misused("Seam().WaitBody")
	}
	if cx.bodyReady() {
		return nil
	}
	c := cx.Carrier
	cx.send100()
	if t := cx.Loop.Opts.BodyTimeout; t > 0 {
		c.SetReadDeadline(t)
	}
	cx.Exchange.WatchInput()
	err := cx.parkUntil(ParkBody, 0)
	c.ReadDeadline = 0
	return err
}

// FailBody makes err the body's sticky error and returns the sticky error. An error without a
// code of its own is kept as it is, so errors.Is still finds what it wraps.
func (cx *Ctx) FailBody(err error) error {
	b := &cx.Body
	if b.Failed == 0 {
		b.Failed = codeOf(err)
		if b.Failed == errOther {
			cx.rare().bodyErr = err
		}
	}
	return cx.bodyErr()
}

// bodyErr returns the body's sticky error, or nil.
func (cx *Ctx) bodyErr() error {
	if cx.Body.Failed == errOther {
		return cx.Extra.Rare.bodyErr
	}
	return cx.Body.err()
}

// BodyErr returns the sticky error of the request body, if reading it failed.
func (cx *Ctx) BodyErr() error {
	if !cx.owned() {
		return cx.misused("BodyErr")
	}
	return cx.bodyErr()
}

// BodyDone reports whether the whole request body has been read.
func (s Seam) BodyDone() bool {
	cx := s.cx
	cx.check("Seam().BodyDone")
	return cx.State != CtxIdle && cx.Body.Complete()
}

// LimitBody bounds the request body to n bytes, below Options.MaxBodyBytes (n <= 0 leaves the
// server's limit alone). Call it before reading the body: a declared Content-Length over n
// fails at once, without a 100 Continue, and a chunked body fails as it crosses n; reads then
// return ErrBodyTooLarge, and a handler that writes nothing gets a 413 from the server. It is
// what a per-route body limit is built on.
func (s Seam) LimitBody(n int64) {
	cx := s.cx
	cx.check("Seam().LimitBody")
	if n <= 0 {
		return
	}
	b := &cx.Body
	if b.Failed != 0 {
		return
	}
	switch b.Kind {
	case BodyLength:
		if cx.Req.ContentLength > n {
			cx.FailBody(ErrBodyTooLarge)
			b.Waiting100 = false
		}
	case bodyChunked:
		if b.Chunked.Limit(n) {
			cx.FailBody(ErrBodyTooLarge)
		}
	case BodyStream:
		if b.Remaining < 0 || b.Remaining > n {
			b.Remaining = n // of what is still to be read
		}
	}
}

// Trailer returns the value of the first trailer field named name (case-insensitive) of a
// chunked request body, or "". Trailers are known once the body has been read to io.EOF.
func (cx *Ctx) Trailer(name string) string {
	cx.check("Trailer")
	for k, v := range cx.Trailers() {
		if syntax.EqualFold(k, name) {
			return v
		}
	}
	return ""
}

// Trailers iterates over the trailer fields of a chunked request body in the order received,
// once the body has been read to io.EOF.
func (cx *Ctx) Trailers() iter.Seq2[string, string] {
	cx.check("Trailers")
	return func(yield func(string, string) bool) {
		cx.check("Trailers")
		b := &cx.Body
		if b.Kind != bodyChunked || !b.EOF {
			return
		}
		b.Chunked.Trailers(func(name, value []byte) bool {
			return yield(string(name), string(value))
		})
	}
}

// ErrReadAgain: ReadBody parked and was woken by new bytes; read again.
var ErrReadAgain = errors.New("dwell: read again")
