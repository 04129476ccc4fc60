package core

import (
	"io"
	"net"
	"os"
	"runtime"
	"time"

	"github.com/dwellhttp/dwell/internal/bufpool"
)

// A connection handed over to goroutines (Ctx.HandOverConn) spans two sides: the goroutines',
// which read and write it as a net.Conn (streamConn), and the loop's, which owns the socket
// (stream, the Protocol the connection is handed over to). They meet in the connection's Remote,
// under its mutex:
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

// inBound is how many received bytes a stream holds for its goroutines before the loop
// stops reading it: room for a burst of messages, and a bound on what a client that sends faster
// than its goroutines read can make the server hold.
const inBound = 64 << 10

// A stream is a connection handed over to goroutines: the Protocol the connection is handed
// over to, whose methods run on the loop, and the state its net.Conn shares with it, guarded by
// the Remote's mutex (r.mu), whose condition variable (r.cond) also says that bytes came in, or
// a deadline passed. hc is the loop's alone.
type stream struct {
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

// A deadline is a point in time after which a stream's reads (or writes) fail, and
// the timer that wakes a Read (or Write) waiting at that moment.
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
	s := &stream{l: cx.l, remote: remote, local: localAddrOf(remote)}
	s.flushFn, s.resumeFn, s.closeFn = s.flush, s.resume, s.closeOnLoop
	hc, err := cx.HandOver(s)
	if err != nil {
		return nil, err
	}
	s.hc, s.r, s.highWater = hc, hc.Remote(), hc.HighWater()
	return newStreamConn(s), nil
}

// localAddrOf returns the address a stream reports as its local one: core does not say which
// of the server's addresses a connection came in on, so the unspecified address of the client's
// family stands for it.
func localAddrOf(remote net.Addr) net.Addr {
	if a, ok := remote.(*net.TCPAddr); ok && a.IP.To4() == nil {
		return &net.TCPAddr{IP: net.IPv6unspecified}
	}
	return &net.TCPAddr{IP: net.IPv4zero}
}

// Receive takes what fits of the client's bytes for the goroutines, and stops the loop reading the
// socket once in is full. It never takes nothing (which core would read as a protocol stuck on a
// full buffer): reading stops as soon as in fills, before a Receive could find it full.
func (s *stream) Receive(c *Conn, in []byte) int {
	s.r.mu.Lock()
	n := min(len(in), inBound-(len(s.in)-s.inOff))
	if n > 0 {
		if s.inOff > 0 {
			k := copy(s.in, s.in[s.inOff:])
			s.in, s.inOff = s.in[:k], 0
		}
		if s.in == nil && n <= streamLarge {
			s.in = bufpool.Get(streamBuffer(n))
		}
		s.in = append(s.in, in[:n]...)
		s.r.cond.Broadcast()
	}
	pause := len(s.in)-s.inOff >= inBound
	s.paused = s.paused || pause
	s.r.mu.Unlock()
	if pause {
		c.PauseReading() // outside mu: core may close the connection here, and Closed takes mu
	}
	return n
}

// Drained has nothing to do: the Remote has woken the writers that waited for the output to go
// under the high-water mark.
func (s *stream) Drained(*Conn) {}

// Timeout is never called: the connection's deadlines are the goroutines' side's (SetDeadline),
// and no core timeout is set.
func (s *stream) Timeout(*Conn) {}

// Shutdown ends the connection's input, as a client's half-close would: Read returns what has
// come and then io.EOF, so that a goroutine reading its connection (a WebSocket's read loop) ends
// and closes it; its writes still go out until then, or until the shutdown's grace period ends.
// net/http leaves hijacked connections alone at a shutdown; here the shutdown would otherwise
// wait its whole grace period for every one.
func (s *stream) Shutdown(c *Conn) {
	s.r.mu.Lock()
	s.eof = true
	s.r.cond.Broadcast()
	s.r.mu.Unlock()
	c.PauseReading()
}

// Closed lets the output buffer go. The Remote, told first, has woken every waiter: reads
// return what is left and then io.EOF, writes fail with the connection's error (gone).
func (s *stream) Closed(*Conn, error) {
	s.r.mu.Lock()
	s.releaseOut()
	s.r.mu.Unlock()
}

// gone returns why the connection closed, nil while it is open: the Remote's error, or
// net.ErrClosed for a close of the net.Conn's own. s.r.mu is held.
func (s *stream) gone() error {
	switch {
	case !s.r.done:
		return nil
	case s.r.err != nil:
		return s.r.err
	}
	return net.ErrClosed
}

// flush queues the goroutines' written bytes on the connection. It runs on the loop (posted by
// Write); core copies the bytes, so the buffer goes back to the pool at once.
func (s *stream) flush() {
	s.r.mu.Lock()
	b := s.out
	s.out = nil
	s.flushPosted = false
	gone := s.r.done
	s.r.mu.Unlock()
	if gone || len(b) == 0 {
		return
	}
	s.hc.Write(b) // past the high-water mark, the Remote is told: writers wait until it drains
	bufpool.Put(b)
	s.r.mu.Lock()
	s.r.cond.Broadcast() // out is empty again
	s.r.mu.Unlock()
}

// resume reads the socket again once the goroutines have read half of in. It runs on the loop.
func (s *stream) resume() {
	s.r.mu.Lock()
	s.resumePosted = false
	ok := s.paused && !s.eof && !s.r.done
	s.paused = false
	s.r.mu.Unlock()
	if ok {
		s.hc.ResumeReading()
	}
}

// closeOnLoop closes the connection once the bytes written before have gone. It runs on the
// loop, after the flush of those bytes (posts run in order).
func (s *stream) closeOnLoop() { s.hc.Close() }

// releaseOut gives the output buffer back. s.mu is held.
func (s *stream) releaseOut() {
	if s.out != nil {
		bufpool.Put(s.out)
		s.out = nil
	}
}

// post runs f on the loop. A loop that has stopped has closed the connection already (Closed
// told the waiters), so nothing is lost when it refuses.
func (s *stream) post(f func()) { s.l.Post(f) }

// A streamConn is the net.Conn that HandOverConn returns: its methods run on goroutines and
// reach the connection, which only its loop may touch, through the stream. It is a
// struct of its own so that the connection closes once the code using it lets go of it without
// closing it, as net/http's does when a hijacked net.Conn is collected.
type streamConn struct{ s *stream }

// Read reads what the client has sent, waiting for it: the bytes that came behind the request's
// head first. It returns io.EOF once the client has closed its side (or the server is shutting
// down) and what it sent has been read.
func (sc *streamConn) Read(p []byte) (int, error) {
	s := sc.s
	s.r.mu.Lock()
	for !s.closed && !s.rd.passed() && len(s.in) == s.inOff && !s.eof && !s.r.done && len(p) > 0 {
		s.r.cond.Wait()
	}
	runtime.KeepAlive(sc) // hc's cleanup must not close the connection while a Read waits on it
	switch {
	case s.closed:
		s.r.mu.Unlock()
		return 0, sc.opError("read", net.ErrClosed)
	case s.rd.passed():
		s.r.mu.Unlock()
		return 0, sc.opError("read", os.ErrDeadlineExceeded)
	case len(s.in) == s.inOff:
		s.r.mu.Unlock()
		if len(p) == 0 {
			return 0, nil
		}
		return 0, io.EOF
	}
	n := copy(p, s.in[s.inOff:])
	s.inOff += n
	if s.inOff == len(s.in) {
		bufpool.Put(s.in) // an idle connection holds no buffer
		s.in, s.inOff = nil, 0
	}
	resume := s.paused && !s.resumePosted && len(s.in)-s.inOff <= inBound/2 && !s.eof && !s.r.done
	s.resumePosted = s.resumePosted || resume
	s.r.mu.Unlock()
	if resume {
		s.post(s.resumeFn)
	}
	return n, nil
}

// Write hands p to the loop, which queues it for the client, and returns: p is copied. While
// the connection's output is past its high-water mark (Options.WriteHighWater), a slow
// client's, Write waits before it takes p, so that a write that times out has written nothing.
func (sc *streamConn) Write(p []byte) (int, error) {
	s := sc.s
	s.r.mu.Lock()
	for len(p) > 0 && !s.closed && !s.r.done && !s.wd.passed() && (s.r.over || len(s.out) >= s.highWater) {
		s.r.cond.Wait()
	}
	runtime.KeepAlive(sc)
	var err error
	switch {
	case s.closed:
		err = net.ErrClosed
	case s.r.done:
		err = s.gone()
	case s.wd.passed():
		err = os.ErrDeadlineExceeded
	}
	if err != nil || len(p) == 0 {
		s.r.mu.Unlock()
		if err != nil {
			return 0, sc.opError("write", err)
		}
		return 0, nil
	}
	if s.out == nil && len(p) <= streamLarge {
		s.out = bufpool.Get(streamBuffer(len(p)))
	}
	s.out = append(s.out, p...)
	flush := !s.flushPosted
	s.flushPosted = true
	s.r.mu.Unlock()
	if flush {
		s.post(s.flushFn)
	}
	return len(p), nil
}

// Close closes the connection once what was written before has gone out. Reads and writes
// waiting return at once with an error wrapping net.ErrClosed, as later ones do.
func (sc *streamConn) Close() error {
	s := sc.s
	s.r.mu.Lock()
	if s.closed {
		s.r.mu.Unlock()
		return sc.opError("close", net.ErrClosed)
	}
	s.closed = true
	s.rd.end()
	s.wd.end()
	s.r.cond.Broadcast()
	s.r.mu.Unlock()
	s.post(s.closeFn)
	return nil
}

// LocalAddr returns the unspecified address of the client's family, on port 0: core does not
// say which of the server's addresses the connection came in on.
func (sc *streamConn) LocalAddr() net.Addr { return sc.s.local }

// RemoteAddr returns the client's address.
func (sc *streamConn) RemoteAddr() net.Addr { return sc.s.remote }

// SetDeadline sets the read and write deadlines.
func (sc *streamConn) SetDeadline(t time.Time) error {
	sc.SetReadDeadline(t)
	return sc.SetWriteDeadline(t)
}

// SetReadDeadline makes reads fail with os.ErrDeadlineExceeded from t on, a Read waiting then
// included; the zero t removes the deadline.
func (sc *streamConn) SetReadDeadline(t time.Time) error {
	return sc.s.setDeadline(&sc.s.rd, t)
}

// SetWriteDeadline makes writes fail with os.ErrDeadlineExceeded from t on, a Write waiting for
// a slow client then included; the zero t removes the deadline.
func (sc *streamConn) SetWriteDeadline(t time.Time) error {
	return sc.s.setDeadline(&sc.s.wd, t)
}

// opError wraps err as a net.Conn's errors are: Timeout() is true for os.ErrDeadlineExceeded,
// and errors.Is finds net.ErrClosed after Close.
func (sc *streamConn) opError(op string, err error) error {
	return &net.OpError{Op: op, Net: "tcp", Source: sc.s.local, Addr: sc.s.remote, Err: err}
}

// setDeadline sets d to t and arms its timer to wake the waiters at t. The timer is the Go
// runtime's, not the loop's (Loop.AfterFunc): a deadline belongs to the goroutines' side, is set
// from their goroutines, and its firing only wakes goroutines waiting on the Remote's condition
// variable, touching nothing of the loop's; a loop timer would need a post to set and a post to
// wake, for goroutines that are not on the loop.
func (s *stream) setDeadline(d *deadline, t time.Time) error {
	s.r.mu.Lock()
	defer s.r.mu.Unlock()
	if s.closed {
		return &net.OpError{Op: "set", Net: "tcp", Source: s.local, Addr: s.remote, Err: net.ErrClosed}
	}
	d.at = t
	wait := time.Until(t)
	switch {
	case t.IsZero():
		d.stop()
	case wait <= 0:
		d.stop()
		s.r.cond.Broadcast()
	case d.timer == nil:
		d.timer = time.AfterFunc(wait, func() { s.deadlineDue(d) })
	default:
		d.timer.Reset(wait)
	}
	return nil
}

// deadlineDue is d's timer: it wakes the waiters once d has passed, or waits again for a
// deadline that was moved, or whose time the wall clock has not reached yet.
func (s *stream) deadlineDue(d *deadline) {
	s.r.mu.Lock()
	defer s.r.mu.Unlock()
	if d.at.IsZero() {
		return
	}
	if wait := time.Until(d.at); wait > 0 {
		d.timer.Reset(wait)
		return
	}
	s.r.cond.Broadcast()
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

// newStreamConn returns the net.Conn of the stream s, which closes it when the code using it
// drops it unclosed. The cleanup refers to s alone: the loop keeps s (it is the
// connection's Protocol), and s never refers to the streamConn.
func newStreamConn(s *stream) *streamConn {
	hc := &streamConn{s: s}
	runtime.AddCleanup(hc, (*stream).abandon, s)
	return hc
}

// abandon closes a connection whose net.Conn was collected unclosed.
func (s *stream) abandon() {
	s.r.mu.Lock()
	closed := s.closed
	s.closed = true
	s.rd.end()
	s.wd.end()
	s.r.mu.Unlock()
	if !closed {
		s.post(s.closeFn)
	}
}

var _ net.Conn = (*streamConn)(nil)

// The stream's buffers, from the shared pool: a small one, as net/http's (4 KiB), and a large
// one once more than that is in flight, io.Copy's piece.
const (
	streamSmall = 4 << 10
	streamLarge = 32 << 10
)

// streamBuffer returns the size of the buffer for n bytes: the small one when they fit, else the
// large one (which n may still overflow: append then grows it off the pool).
func streamBuffer(n int) int {
	if n <= streamSmall {
		return streamSmall
	}
	return streamLarge
}
