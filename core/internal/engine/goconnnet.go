package engine

import (
	"io"
	"net"
	"os"
	"runtime"
	"time"

	"github.com/dwellhttp/dwell/internal/bufpool"
)

// A goNetConn is a GoConn's net.Conn: its methods run on goroutines and reach the connection,
// which only its loop may touch, through the GoConn. It is a struct of
// its own so that the connection closes once the code using it lets go of it without closing it, as
// net/http's does when a hijacked net.Conn is collected.
type goNetConn struct{ h *GoConn }

// Read reads what the client has sent, waiting for it: the bytes that came behind the request's
// head first. It returns io.EOF once the client has closed its side (or the server is shutting
// down) and what it sent has been read.
func (nc *goNetConn) Read(p []byte) (int, error) {
	h := nc.h
	h.r.Mu.Lock()
	for !h.closed && !h.rd.passed() && len(h.in) == h.inOff && !h.eof && !h.r.Done && len(p) > 0 {
		h.r.Cond.Wait()
	}
	runtime.KeepAlive(nc) // nc's cleanup must not close the connection while a Read waits on it
	switch {
	case h.closed:
		h.r.Mu.Unlock()
		return 0, nc.opError("read", net.ErrClosed)
	case h.rd.passed():
		h.r.Mu.Unlock()
		return 0, nc.opError("read", os.ErrDeadlineExceeded)
	case len(h.in) == h.inOff:
		h.r.Mu.Unlock()
		if len(p) == 0 {
			return 0, nil
		}
		return 0, io.EOF
	}
	n := copy(p, h.in[h.inOff:])
	h.inOff += n
	if h.inOff == len(h.in) {
		bufpool.Put(h.in) // an idle connection holds no buffer
		h.in, h.inOff = nil, 0
	}
	resume := h.paused && !h.resumePosted && len(h.in)-h.inOff <= InBound/2 && !h.eof && !h.r.Done
	h.resumePosted = h.resumePosted || resume
	h.r.Mu.Unlock()
	if resume {
		h.post(h.resumeFn)
	}
	return n, nil
}

// Write hands p to the loop, which queues it for the client, and returns: p is copied. While
// the connection's output is past its high-water mark, a slow client's, Write waits before it
// takes p, so that a write that times out has written nothing.
func (nc *goNetConn) Write(p []byte) (int, error) {
	h := nc.h
	h.r.Mu.Lock()
	for len(p) > 0 && !h.closed && !h.r.Done && !h.wd.passed() && (h.r.Over || len(h.out) >= h.highWater) {
		h.r.Cond.Wait()
	}
	runtime.KeepAlive(nc)
	var err error
	switch {
	case h.closed:
		err = net.ErrClosed
	case h.r.Done:
		err = h.gone()
	case h.wd.passed():
		err = os.ErrDeadlineExceeded
	}
	if err != nil || len(p) == 0 {
		h.r.Mu.Unlock()
		if err != nil {
			return 0, nc.opError("write", err)
		}
		return 0, nil
	}
	if h.out == nil && len(p) <= goConnLarge {
		h.out = bufpool.Get(goConnBuffer(len(p)))
	}
	h.out = append(h.out, p...)
	flush := !h.flushPosted
	h.flushPosted = true
	h.r.Mu.Unlock()
	if flush {
		h.post(h.flushFn)
	}
	return len(p), nil
}

// Close closes the connection once what was written before has gone out. Reads and writes
// waiting return at once with an error wrapping net.ErrClosed, as later ones do.
func (nc *goNetConn) Close() error {
	h := nc.h
	h.r.Mu.Lock()
	if h.closed {
		h.r.Mu.Unlock()
		return nc.opError("close", net.ErrClosed)
	}
	h.closed = true
	h.rd.end()
	h.wd.end()
	h.r.Cond.Broadcast()
	h.r.Mu.Unlock()
	h.post(h.closeFn)
	return nil
}

// LocalAddr returns the connection's local address, as its loop side gave it.
func (nc *goNetConn) LocalAddr() net.Addr { return nc.h.local }

// RemoteAddr returns the client's address.
func (nc *goNetConn) RemoteAddr() net.Addr { return nc.h.remote }

// SetDeadline sets the read and write deadlines.
func (nc *goNetConn) SetDeadline(t time.Time) error {
	nc.SetReadDeadline(t)
	return nc.SetWriteDeadline(t)
}

// SetReadDeadline makes reads fail with os.ErrDeadlineExceeded from t on, a Read waiting then
// included; the zero t removes the deadline.
func (nc *goNetConn) SetReadDeadline(t time.Time) error {
	return nc.h.setDeadline(&nc.h.rd, t)
}

// SetWriteDeadline makes writes fail with os.ErrDeadlineExceeded from t on, a Write waiting for
// a slow client then included; the zero t removes the deadline.
func (nc *goNetConn) SetWriteDeadline(t time.Time) error {
	return nc.h.setDeadline(&nc.h.wd, t)
}

// opError wraps err as a net.Conn's errors are: Timeout() is true for os.ErrDeadlineExceeded,
// and errors.Is finds net.ErrClosed after Close.
func (nc *goNetConn) opError(op string, err error) error {
	return &net.OpError{Op: op, Net: "tcp", Source: nc.h.local, Addr: nc.h.remote, Err: err}
}

// setDeadline sets d to t and arms its timer to wake the waiters at t. The timer is the Go
// runtime's, not the loop's, and runs off the loop: a deadline belongs to the goroutines' side,
// is set from their goroutines, and its firing only wakes goroutines waiting on the
// RemoteState's condition variable, touching nothing of the loop's; a loop timer would need a
// post to set and a post to wake, for goroutines that are not on the loop.
func (h *GoConn) setDeadline(d *deadline, t time.Time) error {
	h.r.Mu.Lock()
	defer h.r.Mu.Unlock()
	if h.closed {
		return &net.OpError{Op: "set", Net: "tcp", Source: h.local, Addr: h.remote, Err: net.ErrClosed}
	}
	d.at = t
	wait := time.Until(t)
	switch {
	case t.IsZero():
		d.stop()
	case wait <= 0:
		d.stop()
		h.r.Cond.Broadcast()
	case d.timer == nil:
		d.timer = time.AfterFunc(wait, func() { h.deadlineDue(d) })
	default:
		d.timer.Reset(wait)
	}
	return nil
}

// deadlineDue is d's timer: it wakes the waiters once d has passed, or waits again for a
// deadline that was moved, or whose time the wall clock has not reached yet.
func (h *GoConn) deadlineDue(d *deadline) {
	h.r.Mu.Lock()
	defer h.r.Mu.Unlock()
	if d.at.IsZero() {
		return
	}
	if wait := time.Until(d.at); wait > 0 {
		d.timer.Reset(wait)
		return
	}
	h.r.Cond.Broadcast()
}

// passed reports whether the deadline has passed.
func (d *deadline) passed() bool { return !d.at.IsZero() && !time.Now().Before(d.at) }

// stop stops the deadline's timer.
func (d *deadline) stop() {
	if d.timer != nil {
		d.timer.Stop()
	}
}

// end removes the deadline, for good: the connection is closed.
func (d *deadline) end() {
	d.at = time.Time{}
	d.stop()
}

// newGoNetConn returns the net.Conn of h, which closes the connection when the code using it
// drops it unclosed. The cleanup refers to h alone: the loop keeps h (its connection's protocol
// does), and h never refers to the goNetConn.
func newGoNetConn(h *GoConn) *goNetConn {
	nc := &goNetConn{h: h}
	runtime.AddCleanup(nc, (*GoConn).abandon, h)
	return nc
}

// abandon closes a connection whose net.Conn was collected unclosed.
func (h *GoConn) abandon() {
	h.r.Mu.Lock()
	closed := h.closed
	h.closed = true
	h.rd.end()
	h.wd.end()
	h.r.Mu.Unlock()
	if !closed {
		h.post(h.closeFn)
	}
}

var _ net.Conn = (*goNetConn)(nil)
