package core

import (
	"errors"
	"io"

	"github.com/dwellhttp/dwell/core/internal/netpoll"
)

// The connection's side of reading a request body: what Ctx.ReadBody asks of it.

// continue100 is the interim response to Expect: 100-continue (RFC 9110 §15.2.1).
var continue100 = []byte("HTTP/1.1 100 Continue\r\n\r\n")

// sendContinue answers Expect: 100-continue, ahead of anything the handler wrote (its final
// response is not committed yet), unless the body has begun to arrive anyway.
func (c *conn) sendContinue() {
	if len(c.in) == 0 && c.state != stClosed {
		c.out.InsertBeforeHead(&c.l.pool, continue100)
		c.flush()
	}
}

// hasInput reports whether input has arrived that the loop has not yet taken.
func (c *conn) hasInput() bool { return len(c.in) > 0 }

// watchInput watches the socket for input while a handler waits for its body.
func (c *conn) watchInput() { c.setInterest(c.events | netpoll.WatchRead | netpoll.WatchHangup) }

// errReadAgain: readBody parked and was woken by new bytes; read again.
var errReadAgain = errors.New("dwell: read again")

// readBody moves more of cx's body into p: first what has arrived with the head or a chunk
// read before (decoded: n bytes, and io.EOF on the call after the last), then from the socket.
// A Content-Length body is read straight into p, at most the bytes left, so nothing past the
// body is consumed; a chunked body is read into the loop buffer for the decoder (0 bytes and
// no error: decode it), and any bytes past its end stay as the next request's. When nothing has
// arrived the handler parks until something does (errReadAgain), with the progress-based body
// timeout.
func (c *conn) readBody(cx *Ctx, p []byte) (n int, err error) {
	b := &cx.body
	if len(c.in) > 0 {
		nd, ns, err := b.decode(p, c.in)
		c.in = c.in[ns:]
		switch {
		case nd > 0:
			if err == io.EOF {
				err = nil // io.EOF comes with the next call
			}
			return nd, err
		case err == nil:
			return 0, errReadAgain
		}
		return 0, err
	}
	if c.state == stClosed {
		if cx.gone != 0 {
			return 0, cx.gone.err()
		}
		return 0, ErrClosed
	}
	if cx.gone.err() == ErrDeadline {
		return 0, ErrDeadline
	}
	if c.peerEOF {
		return 0, io.ErrUnexpectedEOF
	}
	var e netpoll.Errno
	if b.kind == bodyStream {
		n, e = c.tr().read(c, p)
		if n > 0 {
			if b.remaining >= 0 {
				if int64(n) > b.remaining {
					return 0, ErrBodyTooLarge
				}
				b.remaining -= int64(n)
			}
			return n, nil
		}
		if e == 0 {
			b.eof = true
			return 0, io.EOF
		}
	} else if b.kind == bodyLength {
		n, e = c.tr().read(c, p[:min(int64(len(p)), b.remaining)])
		if n > 0 {
			b.remaining -= int64(n)
			return n, nil
		}
	} else {
		// As much as the handler asked for, of the chunk being read, and room for the framing
		// and the next chunk's start: so little is read past the body's end (see headRead).
		want := int(min(int64(len(c.l.buf)), min(b.chunked.DataLeft(), int64(len(p)))+headRead))
		n, e = c.tr().read(c, c.l.buf[:want])
		if n > 0 {
			c.in = c.l.buf[:n]
			return 0, nil
		}
	}
	switch {
	case e == 0:
		c.peerEOF = true
		return 0, io.ErrUnexpectedEOF
	case e == netpoll.EINTR:
		return 0, errReadAgain
	case e != netpoll.EAGAIN:
		c.close(ErrClosed)
		return 0, ErrClosed
	}
	if !cx.inHandler() {
		return 0, errReadBodyRefused
	}
	if err := c.waitReadable(cx); err != nil {
		return 0, err
	}
	return 0, errReadAgain
}
