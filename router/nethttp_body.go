package router

import (
	"net/http"
	"sync"
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
		if b.r == len(b.buf) {
			return n, b.err
		}
		return n, nil
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
		b.buf = getBuffer()
	}
	n, err := b.fill(b.buf[:cap(b.buf)])
	b.buf = b.buf[:n]
	b.r = copy(p, b.buf)
	if b.r < n {
		return b.r, nil // the error comes with the last buffered byte
	}
	return b.r, err
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
	if b.buf != nil {
		putBuffer(b.buf)
		b.buf, b.r = nil, 0
	}
	b.x = nil
}

// bufferSize is the size of the writer's and the body reader's buffers: what a handler's
// small writes gather in before they go to the loop in one call, and what a small read fills
// in one call. net/http's server has 4 KiB buffers on each side too.
const bufferSize = 4 << 10

var buffers = sync.Pool{New: func() any { return new([bufferSize]byte) }}

// getBuffer returns an empty buffer of bufferSize capacity.
func getBuffer() []byte { return buffers.Get().(*[bufferSize]byte)[:0] }

// putBuffer gives b, which getBuffer returned, back for reuse.
func putBuffer(b []byte) { buffers.Put((*[bufferSize]byte)(b[:bufferSize])) }
