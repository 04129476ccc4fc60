package nethttp

import (
	"net/http"

	"github.com/dwellhttp/dwell/internal/bufpool"
)

// A bodyReader is r.Body for a request that has a body: each Read that finds nothing buffered
// is a call to the loop, which reads the client's bytes straight into the caller's buffer when
// it is large, or into a 4 KiB buffer of the reader's for small reads (a JSON decoder's, say),
// so that they do not each cost a call.
type bodyReader struct {
	x      *exchange // nil once the handler has returned
	req    *http.Request
	buf    []byte // buf[r:] is read from the client and not yet by the handler
	r      int
	err    error // sticky: io.EOF at the end, or what ended the body
	closed bool
}

// Read reads the request body as net/http's does: io.EOF after the last byte (and, for a
// chunked body, once its trailers are in r.Trailer); an error that cut the body stays.
func (b *bodyReader) Read(p []byte) (int, error) {
	if b.x == nil || b.closed {
		return 0, http.ErrBodyReadAfterClose
	}
	if b.r < len(b.buf) {
		n := copy(p, b.buf[b.r:])
		b.r += n
		if b.r < len(b.buf) {
			return n, nil
		}
		if b.err != nil {
			b.releaseBuffer()
		}
		return n, b.err
	}
	if b.err != nil {
		return 0, b.err
	}
	if len(p) == 0 {
		return 0, nil
	}
	if len(p) >= bufferSize {
		return b.fill(p)
	}
	if b.buf == nil {
		b.buf = bufpool.Get(bufferSize)
	}
	n, err := b.fill(b.buf[:cap(b.buf)])
	b.buf = b.buf[:n]
	k := copy(p, b.buf)
	b.r = k
	if k < n {
		return k, nil // the error comes with the last buffered byte
	}
	if err != nil {
		b.releaseBuffer() // the body is over: a handler that goes on waiting holds no buffer
	}
	return k, err
}

// fill is one call to the loop, reading into p.
func (b *bodyReader) fill(p []byte) (int, error) {
	cl := &b.x.call
	cl.kind = callRead
	cl.p = p
	b.x.do()
	n, err := cl.n, cl.err
	if len(cl.trailers) > 0 {
		mergeTrailer(b.req, cl.trailers)
		clear(cl.trailers)
		cl.trailers = cl.trailers[:0]
	}
	cl.p, cl.n, cl.err = nil, 0, nil
	if err != nil {
		b.err = err
	}
	return n, err
}

// Close ends the handler's reading: later reads fail, as in net/http. The server skips the
// unread rest of the body, or closes the connection when there is too much of it.
func (b *bodyReader) Close() error {
	b.closed = true
	b.release()
	return nil
}

// release gives the buffer back; the handler is done reading.
func (b *bodyReader) release() {
	b.releaseBuffer()
	b.x = nil
}

func (b *bodyReader) releaseBuffer() {
	if b.buf != nil {
		bufpool.Put(b.buf)
		b.buf, b.r = nil, 0
	}
}
