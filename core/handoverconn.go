package core

import (
	"io"
	"net"
	"os"
	"runtime"
	"time"

	"github.com/dwellhttp/dwell/internal/bufpool"
)

// A connection handed over to goroutines (Ctx.HandOverConn) spans two sides: the goroutines', which
// read and write it as a net.Conn (handedNetConn), and the loop's, which owns the socket
// (handedConn, the Protocol the connection is handed over to). They meet in the connection's
// Remote, under its mutex:
//
//	client → loop's read buffer → Receive → in (at most inBound) → Read
//	Write → out (at most the high-water mark) → Loop.Post → Conn.Write → write queue → client
//
// A Read waits on the Remote's condition variable for Receive to bring bytes; a Write waits
// there while the connection's output is past its high-water mark, until it drains. When in is
// full the loop stops reading the socket (Conn.PauseReading), so that the client's further bytes
// wait in the kernel and TCP's flow control holds the client back, and reads again once the
// goroutines have read half. Deadlines are timers of the goroutines' side: when one passes, it
// wakes the waiters, which return os.ErrDeadlineExceeded. The state costs nothing on the loop
// but the Conn and this struct: no coroutine, no goroutine, and no buffer while nothing is in
// flight (the buffers come from the shared pool and go back once emptied).

// inBound is how many received bytes a handed connection holds for its goroutines before the loop
// stops reading it: room for a burst of messages, and a bound on what a client that sends faster
// than its goroutines read can make the server hold.
const inBound = 64 << 10

// A handedConn is a connection handed over to goroutines: the Protocol the connection is handed
// over to, whose methods run on the loop, and the state its net.Conn shares with it, guarded by the
// Remote's mutex (r.mu), whose condition variable (r.cond) also says that bytes came in, or a
// deadline passed. hc is the loop's alone.
type handedConn struct {
	l             *Loop
	hc            *Conn   // set on the loop at the hand-over, before any Protocol call
	r             *Remote // hc's: over, done and err are the output's and the connection's state
	local, remote net.Addr

	in           []byte // in[inOff:] has come from the client and not yet been read
	inOff        int
	paused       bool // the loop stopped reading the socket: in is full
	resumePosted bool // a resume is posted to the loop and has not run yet
	eof          bool // no more input will come: the server is shutting down

	out         []byte // written by the goroutines, not yet queued on the loop
	flushPosted bool   // a flush of out is posted to the loop and has not run yet
	highWater   int

	closed bool // Close was called

	rd, wd deadline

	flushFn, resumeFn, closeFn func() // method values, made once: posting them allocates nothing
}

// A deadline is a point in time after which a handed connection's reads (or writes) fail, and the
// timer that wakes a Read (or Write) waiting at that moment.
type deadline struct {
	at    time.Time
	timer *time.Timer
}

// HandOverConn hands the request's connection over, as HandOver does (the same 101, or nothing
// for a raw takeover), to goroutines: it returns a net.Conn any goroutine may read and write,
// whose bytes the connection's loop carries — those that came behind the request's head first.
// Read returns io.EOF once the client has closed its side or a shutdown has begun, and what it
// sent has been read; Write copies its bytes and returns, waiting first while the connection's
// output is past its high-water mark (Options.WriteHighWater); Close closes the connection once
// what was written before has gone out. What the client sends is held up to 64 KiB before the
// loop stops reading it, until the goroutines have read half. The connection closes once the
// net.Conn is collected unclosed, as net/http's hijacked ones do. This is net/http's Hijack
// (the bridge's is built on it), for code that wants a goroutine and a net.Conn rather than a
// Protocol.
func (cx *Ctx) HandOverConn() (net.Conn, error) {
	cx.check("HandOverConn")
	remote := net.TCPAddrFromAddrPort(cx.RemoteAddr())
	h := &handedConn{l: cx.l, remote: remote, local: localAddrOf(remote)}
	h.flushFn, h.resumeFn, h.closeFn = h.flush, h.resume, h.closeOnLoop
	hc, err := cx.HandOver(h)
	if err != nil {
		return nil, err
	}
	h.hc, h.r, h.highWater = hc, hc.Remote(), hc.HighWater()
	return newHandedNetConn(h), nil
}

// localAddrOf returns the address a handed connection reports as its local one: core does not say
// which of the server's addresses a connection came in on, so the unspecified address of the
// client's family stands for it.
func localAddrOf(remote net.Addr) net.Addr {
	if a, ok := remote.(*net.TCPAddr); ok && a.IP.To4() == nil {
		return &net.TCPAddr{IP: net.IPv6unspecified}
	}
	return &net.TCPAddr{IP: net.IPv4zero}
}

// Receive takes what fits of the client's bytes for the goroutines, and stops the loop reading the
// socket once in is full. It never takes nothing (which core would read as a protocol stuck on a
// full buffer): reading stops as soon as in fills, before a Receive could find it full.
func (h *handedConn) Receive(c *Conn, in []byte) int {
	h.r.mu.Lock()
	n := min(len(in), inBound-(len(h.in)-h.inOff))
	if n > 0 {
		if h.inOff > 0 {
			k := copy(h.in, h.in[h.inOff:])
			h.in, h.inOff = h.in[:k], 0
		}
		if h.in == nil && n <= handedLarge {
			h.in = bufpool.Get(handedBuffer(n))
		}
		h.in = append(h.in, in[:n]...)
		h.r.cond.Broadcast()
	}
	pause := len(h.in)-h.inOff >= inBound
	h.paused = h.paused || pause
	h.r.mu.Unlock()
	if pause {
		c.PauseReading() // outside mu: core may close the connection here, and Closed takes mu
	}
	return n
}

// Drained has nothing to do: the Remote has woken the writers that waited for the output to go
// under the high-water mark.
func (h *handedConn) Drained(*Conn) {}

// Timeout is never called: the connection's deadlines are the goroutines' side's (SetDeadline),
// and no core timeout is set.
func (h *handedConn) Timeout(*Conn) {}

// Shutdown ends the connection's input, as a client's half-close would: Read returns what has
// come and then io.EOF, so that a goroutine reading its connection (a WebSocket's read loop) ends
// and closes it; its writes still go out until then, or until the shutdown's grace period ends.
// net/http leaves hijacked connections alone at a shutdown; here the shutdown would otherwise
// wait its whole grace period for every one.
func (h *handedConn) Shutdown(c *Conn) {
	h.r.mu.Lock()
	h.eof = true
	h.r.cond.Broadcast()
	h.r.mu.Unlock()
	c.PauseReading()
}

// Closed lets the output buffer go. The Remote, told first, has woken every waiter: reads
// return what is left and then io.EOF, writes fail with the connection's error (gone).
func (h *handedConn) Closed(*Conn, error) {
	h.r.mu.Lock()
	h.releaseOut()
	h.r.mu.Unlock()
}

// gone returns why the connection closed, nil while it is open: the Remote's error, or
// net.ErrClosed for a close of the net.Conn's own. h.r.mu is held.
func (h *handedConn) gone() error {
	switch {
	case !h.r.done:
		return nil
	case h.r.err != nil:
		return h.r.err
	}
	return net.ErrClosed
}

// flush queues the goroutines' written bytes on the connection. It runs on the loop (posted by
// Write); core copies the bytes, so the buffer goes back to the pool at once.
func (h *handedConn) flush() {
	h.r.mu.Lock()
	b := h.out
	h.out = nil
	h.flushPosted = false
	gone := h.r.done
	h.r.mu.Unlock()
	if gone || len(b) == 0 {
		return
	}
	h.hc.Write(b) // past the high-water mark, the Remote is told: writers wait until it drains
	bufpool.Put(b)
	h.r.mu.Lock()
	h.r.cond.Broadcast() // out is empty again
	h.r.mu.Unlock()
}

// resume reads the socket again once the goroutines have read half of in. It runs on the loop.
func (h *handedConn) resume() {
	h.r.mu.Lock()
	h.resumePosted = false
	ok := h.paused && !h.eof && !h.r.done
	h.paused = false
	h.r.mu.Unlock()
	if ok {
		h.hc.ResumeReading()
	}
}

// closeOnLoop closes the connection once the bytes written before have gone. It runs on the
// loop, after the flush of those bytes (posts run in order).
func (h *handedConn) closeOnLoop() { h.hc.Close() }

// releaseOut gives the output buffer back. h.r.mu is held.
func (h *handedConn) releaseOut() {
	if h.out != nil {
		bufpool.Put(h.out)
		h.out = nil
	}
}

// post runs f on the loop. A loop that has stopped has closed the connection already (Closed
// told the waiters), so nothing is lost when it refuses.
func (h *handedConn) post(f func()) { h.l.Post(f) }

// A handedNetConn is the net.Conn that HandOverConn returns: its methods run on goroutines and
// reach the connection, which only its loop may touch, through the handedConn. It is a struct of
// its own so that the connection closes once the code using it lets go of it without closing it, as
// net/http's does when a hijacked net.Conn is collected.
type handedNetConn struct{ h *handedConn }

// Read reads what the client has sent, waiting for it: the bytes that came behind the request's
// head first. It returns io.EOF once the client has closed its side (or the server is shutting
// down) and what it sent has been read.
func (nc *handedNetConn) Read(p []byte) (int, error) {
	h := nc.h
	h.r.mu.Lock()
	for !h.closed && !h.rd.passed() && len(h.in) == h.inOff && !h.eof && !h.r.done && len(p) > 0 {
		h.r.cond.Wait()
	}
	runtime.KeepAlive(nc) // nc's cleanup must not close the connection while a Read waits on it
	switch {
	case h.closed:
		h.r.mu.Unlock()
		return 0, nc.opError("read", net.ErrClosed)
	case h.rd.passed():
		h.r.mu.Unlock()
		return 0, nc.opError("read", os.ErrDeadlineExceeded)
	case len(h.in) == h.inOff:
		h.r.mu.Unlock()
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
	resume := h.paused && !h.resumePosted && len(h.in)-h.inOff <= inBound/2 && !h.eof && !h.r.done
	h.resumePosted = h.resumePosted || resume
	h.r.mu.Unlock()
	if resume {
		h.post(h.resumeFn)
	}
	return n, nil
}

// Write hands p to the loop, which queues it for the client, and returns: p is copied. While
// the connection's output is past its high-water mark (Options.WriteHighWater), a slow
// client's, Write waits before it takes p, so that a write that times out has written nothing.
func (nc *handedNetConn) Write(p []byte) (int, error) {
	h := nc.h
	h.r.mu.Lock()
	for len(p) > 0 && !h.closed && !h.r.done && !h.wd.passed() && (h.r.over || len(h.out) >= h.highWater) {
		h.r.cond.Wait()
	}
	runtime.KeepAlive(nc)
	var err error
	switch {
	case h.closed:
		err = net.ErrClosed
	case h.r.done:
		err = h.gone()
	case h.wd.passed():
		err = os.ErrDeadlineExceeded
	}
	if err != nil || len(p) == 0 {
		h.r.mu.Unlock()
		if err != nil {
			return 0, nc.opError("write", err)
		}
		return 0, nil
	}
	if h.out == nil && len(p) <= handedLarge {
		h.out = bufpool.Get(handedBuffer(len(p)))
	}
	h.out = append(h.out, p...)
	flush := !h.flushPosted
	h.flushPosted = true
	h.r.mu.Unlock()
	if flush {
		h.post(h.flushFn)
	}
	return len(p), nil
}

// Close closes the connection once what was written before has gone out. Reads and writes
// waiting return at once with an error wrapping net.ErrClosed, as later ones do.
func (nc *handedNetConn) Close() error {
	h := nc.h
	h.r.mu.Lock()
	if h.closed {
		h.r.mu.Unlock()
		return nc.opError("close", net.ErrClosed)
	}
	h.closed = true
	h.rd.end()
	h.wd.end()
	h.r.cond.Broadcast()
	h.r.mu.Unlock()
	h.post(h.closeFn)
	return nil
}

// LocalAddr returns the unspecified address of the client's family, on port 0: core does not
// say which of the server's addresses the connection came in on.
func (nc *handedNetConn) LocalAddr() net.Addr { return nc.h.local }

// RemoteAddr returns the client's address.
func (nc *handedNetConn) RemoteAddr() net.Addr { return nc.h.remote }

// SetDeadline sets the read and write deadlines.
func (nc *handedNetConn) SetDeadline(t time.Time) error {
	nc.SetReadDeadline(t)
	return nc.SetWriteDeadline(t)
}

// SetReadDeadline makes reads fail with os.ErrDeadlineExceeded from t on, a Read waiting then
// included; the zero t removes the deadline.
func (nc *handedNetConn) SetReadDeadline(t time.Time) error {
	return nc.h.setDeadline(&nc.h.rd, t)
}

// SetWriteDeadline makes writes fail with os.ErrDeadlineExceeded from t on, a Write waiting for
// a slow client then included; the zero t removes the deadline.
func (nc *handedNetConn) SetWriteDeadline(t time.Time) error {
	return nc.h.setDeadline(&nc.h.wd, t)
}

// opError wraps err as a net.Conn's errors are: Timeout() is true for os.ErrDeadlineExceeded,
// and errors.Is finds net.ErrClosed after Close.
func (nc *handedNetConn) opError(op string, err error) error {
	return &net.OpError{Op: op, Net: "tcp", Source: nc.h.local, Addr: nc.h.remote, Err: err}
}

// setDeadline sets d to t and arms its timer to wake the waiters at t. The timer is the Go
// runtime's, not the loop's (Loop.AfterFunc): a deadline belongs to the goroutines' side, is set
// from their goroutines, and its firing only wakes goroutines waiting on the Remote's condition
// variable, touching nothing of the loop's; a loop timer would need a post to set and a post to
// wake, for goroutines that are not on the loop.
func (h *handedConn) setDeadline(d *deadline, t time.Time) error {
	h.r.mu.Lock()
	defer h.r.mu.Unlock()
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
		h.r.cond.Broadcast()
	case d.timer == nil:
		d.timer = time.AfterFunc(wait, func() { h.deadlineDue(d) })
	default:
		d.timer.Reset(wait)
	}
	return nil
}

// deadlineDue is d's timer: it wakes the waiters once d has passed, or waits again for a
// deadline that was moved, or whose time the wall clock has not reached yet.
func (h *handedConn) deadlineDue(d *deadline) {
	h.r.mu.Lock()
	defer h.r.mu.Unlock()
	if d.at.IsZero() {
		return
	}
	if wait := time.Until(d.at); wait > 0 {
		d.timer.Reset(wait)
		return
	}
	h.r.cond.Broadcast()
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

// newHandedNetConn returns the net.Conn of the handed connection h, which closes it when the
// code using it drops it unclosed. The cleanup refers to h alone: the loop keeps h (it is the
// connection's Protocol), and h never refers to the handedNetConn.
func newHandedNetConn(h *handedConn) *handedNetConn {
	nc := &handedNetConn{h: h}
	runtime.AddCleanup(nc, (*handedConn).abandon, h)
	return nc
}

// abandon closes a connection whose net.Conn was collected unclosed.
func (h *handedConn) abandon() {
	h.r.mu.Lock()
	closed := h.closed
	h.closed = true
	h.rd.end()
	h.wd.end()
	h.r.mu.Unlock()
	if !closed {
		h.post(h.closeFn)
	}
}

var _ net.Conn = (*handedNetConn)(nil)

// A handed connection's buffers, from the shared pool: a small one, as net/http's (4 KiB), and a
// large one once more than that is in flight, io.Copy's piece.
const (
	handedSmall = 4 << 10
	handedLarge = 32 << 10
)

// handedBuffer returns the size of the buffer for n bytes: the small one when they fit, else the
// large one (which n may still overflow: append then grows it off the pool).
func handedBuffer(n int) int {
	if n <= handedSmall {
		return handedSmall
	}
	return handedLarge
}
