package core

import (
	"io"
	"unsafe"

	"golang.org/x/sys/unix"
)

// continue100 is the interim response to Expect: 100-continue (RFC 9110 §15.2.1).
var continue100 = []byte("HTTP/1.1 100 Continue\r\n\r\n")

// ReadBody reads request body bytes into p, as an io.Reader does: it returns what has arrived,
// parking the handler until some does, and io.EOF after the last byte (and the trailers of a
// chunked body). When nothing is buffered it reads the socket straight into p. It is the
// low-level reader under package body, which adds limits and helpers.
//
// A client that sent Expect: 100-continue gets its 100 Continue on the first ReadBody, so a
// handler that refuses the request without reading never makes it send the body.
//
// Errors are sticky: ErrBodyTooLarge past Options.MaxBodyBytes, a malformed chunked body,
// io.ErrUnexpectedEOF when the client stops mid-body, ErrTimeout after Options.BodyTimeout
// without progress, ErrClosed or ErrShutdown.
func (cx *Ctx) ReadBody(p []byte) (int, error) {
	c := cx.conn
	b := &cx.body
	if b.failed != 0 {
		return 0, b.err()
	}
	if cx.state == ctxIdle || b.complete() {
		return 0, io.EOF
	}
	if len(p) == 0 {
		return 0, nil
	}
	if b.waiting100 {
		b.waiting100 = false
		if len(c.in) == 0 && cx.rflags&rfCommitted == 0 && c.state != stClosed {
			// Ahead of anything else the handler writes: the final response is not committed.
			c.out.insertBeforeHead(&c.l.pool, continue100)
			c.flush()
		}
	}
	for {
		if len(c.in) > 0 {
			nd, ns, err := b.decode(p, c.in)
			c.in = c.in[ns:]
			if err != nil && err != io.EOF {
				return nd, err
			}
			if nd > 0 {
				return nd, nil // io.EOF, if this was the end, comes with the next call
			}
			if err == io.EOF {
				return 0, io.EOF
			}
			continue
		}
		n, err := cx.readSocket(p)
		switch {
		case err == errReadAgain:
		case err != nil:
			return 0, b.fail(err)
		case n > 0:
			return n, nil
		}
	}
}

// errReadAgain: readSocket parked and was woken by new bytes; read again.
var errReadAgain = &framingError{"internal: read again"}

// readSocket reads more of the body. A Content-Length body is read straight into p, at most the
// bytes left, so nothing past the body is consumed (cx.direct says how many); a chunked body is
// read into the loop buffer for the decoder, and any bytes past its end stay as the next
// request's.
func (cx *Ctx) readSocket(p []byte) (direct int, err error) {
	c := cx.conn
	l := c.l
	b := &cx.body
	if c.state == stClosed {
		if cx.gone != 0 {
			return 0, cx.gone.err()
		}
		return 0, ErrClosed
	}
	if c.peerEOF {
		return 0, io.ErrUnexpectedEOF
	}
	var n int
	var e unix.Errno
	if b.kind == bodyLength {
		n, e = sysRead(int(c.fd), p[:min(int64(len(p)), b.remaining)])
		if n > 0 {
			b.remaining -= int64(n)
			return n, nil
		}
	} else {
		n, e = sysRead(int(c.fd), l.buf)
		if n > 0 {
			c.in = l.buf[:n]
			return 0, nil
		}
	}
	switch {
	case e == 0:
		c.peerEOF = true
		return 0, io.ErrUnexpectedEOF
	case e == unix.EINTR:
		return 0, errReadAgain
	case e != unix.EAGAIN:
		c.close(ErrClosed)
		return 0, ErrClosed
	}
	if l.current != cx {
		return 0, ErrNotInHandler
	}
	// Nothing yet: park until the socket is readable, with a progress-based deadline.
	if l.opts.BodyTimeout > 0 {
		c.setReadDeadline(l.opts.BodyTimeout)
	}
	c.setInterest(c.events | evRead | evHangup)
	err = cx.suspend(parkRead)
	c.rdl = 0
	if err != nil {
		return 0, err
	}
	return 0, errReadAgain
}

// BodyErr returns the sticky error of the request body, if reading it failed.
func (cx *Ctx) BodyErr() error { return cx.body.err() }

// BodyDone reports whether the whole request body has been read.
func (cx *Ctx) BodyDone() bool { return cx.state != ctxIdle && cx.body.complete() }

// Trailer returns the value of the first trailer field named name (case-insensitive) of a
// chunked request body, or "". Trailers are known once the body has been read to io.EOF.
// Borrowed.
func (cx *Ctx) Trailer(name string) string {
	var v string
	cx.Trailers()(func(k, val string) bool {
		if equalFoldString(k, name) {
			v = val
			return false
		}
		return true
	})
	return v
}

// Trailers iterates over the trailer fields of a chunked request body in the order received,
// once the body has been read to io.EOF. Borrowed.
func (cx *Ctx) Trailers() func(yield func(name, value string) bool) {
	return func(yield func(string, string) bool) {
		b := &cx.body
		if b.kind != bodyChunked || !b.eof {
			return
		}
		b.chunked.trailers(func(name, value []byte) bool {
			return yield(borrowString(name), borrowString(value))
		})
	}
}

// borrowString views b as a string without copying; b must not change while the string is used.
func borrowString(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }
