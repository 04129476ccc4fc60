package nethttp

import (
	"net/http"
	"sync"

	"github.com/dwellhttp/dwell/internal/bufpool"
)

// A bodyReader is r.Body for a request that has a body: each Read that finds nothing buffered
// is a call to the loop, which reads the client's bytes straight into the caller's buffer when
// it is large, or into a 4 KiB buffer of the reader's for small reads (a JSON decoder's, say),
// so that they do not each cost a call.
//
// The handler may read on a goroutine of its own while it writes (gRPC does): mu orders the
// reader's use of x against the handler's return, after which x may serve another request.
type bodyReader struct {
	mu      sync.Mutex
	x       *exchange // nil once the handler has returned
	req     *http.Request
	buf     []byte // buf[r:] is read from the client and not yet by the handler
	r       int
	err     error // sticky: io.EOF at the end, or what ended the body
	closed  bool
	filling bool // a call is reading into buf: it is not given back meanwhile
}

// Read reads the request body as net/http's does: io.EOF after the last byte (and, for a
// chunked body, once its trailers are in r.Trailer); an error that cut the body stays.
func (b *bodyReader) Read(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
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

// fill is one call to the loop, reading into p. It is made with mu held, which it lets go
// while the call waits: the handler's return (release) takes it, and then knows whether a read
// is under way.
func (b *bodyReader) fill(p []byte) (int, error) {
	x := b.x
	x.mu.Lock()
	x.readers++
	x.mu.Unlock()
	cl := &x.rcall
	cl.kind = callRead
	cl.p = p
	b.filling = true
	b.mu.Unlock()
	x.do(true)
	b.mu.Lock()
	b.filling = false
	n, err := cl.n, cl.err
	if len(cl.trailers) > 0 {
		mergeTrailer(b.req, cl.trailers)
		clear(cl.trailers)
		cl.trailers = cl.trailers[:0]
	}
	cl.p, cl.n, cl.err = nil, 0, nil
	x.mu.Lock()
	x.readers--
	x.mu.Unlock()
	if err != nil {
		b.err = err
	}
	if b.x == nil && err == nil { // the handler returned meanwhile: this read is the last
		err = http.ErrBodyReadAfterClose
		b.err = err
	}
	return n, err
}

// Close ends the handler's reading: later reads fail, as in net/http. The server skips the
// unread rest of the body, or closes the connection when there is too much of it.
func (b *bodyReader) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closed = true
	b.releaseLocked()
	return nil
}

// release gives the buffer back; the handler is done reading.
func (b *bodyReader) release() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.releaseLocked()
}

func (b *bodyReader) releaseLocked() {
	if !b.filling {
		b.releaseBuffer()
	}
	b.x = nil
}

func (b *bodyReader) releaseBuffer() {
	if b.buf != nil {
		bufpool.Put(b.buf)
		b.buf, b.r = nil, 0
	}
}
