package nethttp

import (
	"io"
	"net"
	"os"
	"runtime"
	"sync"
	"time"

	"github.com/dwellhttp/dwell/core"
)

// A hijacked connection spans two goroutines: the handler's, which reads and writes it as a
// net.Conn (hijackedConn), and the loop's, which owns the socket (hijackState, the core.Protocol
// the connection is handed over to). They meet in hijackState, under its mutex:
//
//	client → loop's read buffer → Receive → in (at most inBound) → Read
//	Write → out (at most the high-water mark) → Loop.Post → core.Conn.Write → write queue → client
//
// A Read waits on the condition variable for Receive to bring bytes; a Write waits there while
// the connection's output is past its high-water mark, until Drained. When in is full the loop
// stops reading the socket (core.Conn.PauseReading), so that the client's further bytes wait in
// the kernel and TCP's flow control holds the client back, and reads again once the handler has
// read half. Deadlines are timers of the handler's side: when one passes, it wakes the waiters,
// which return os.ErrDeadlineExceeded. The state costs nothing on the loop but the core.Conn and
// this struct: no coroutine, no goroutine, and no buffer while nothing is in flight (the buffers
// come from the bridge's pool and go back once emptied).

// inBound is how many received bytes a hijacked connection holds for its handler before the loop
// stops reading it: room for a burst of messages, and a bound on what a client that sends faster
// than its handler reads can make the server hold.
const inBound = 64 << 10

// A hijackState is a hijacked connection's state shared by its loop and its handler's goroutine,
// and the core.Protocol the connection is handed over to. The Protocol's methods run on the
// loop; hc is the loop's alone.
type hijackState struct {
	loop          *core.Loop
	hc            *core.Conn // set on the loop at the hand-over, before any Protocol call
	local, remote net.Addr

	mu   sync.Mutex
	cond sync.Cond // on mu: bytes came in, room opened up for output, a deadline passed, or the state changed

	in           []byte // in[inOff:] has come from the client and not yet been read
	inOff        int
	paused       bool // the loop stopped reading the socket: in is full
	resumePosted bool // a resume is posted to the loop and has not run yet
	eof          bool // no more input will come: the server is shutting down

	out         []byte // written by the handler, not yet queued on the loop
	flushPosted bool   // a flush of out is posted to the loop and has not run yet
	over        bool   // the connection's output is past its high-water mark: writers wait for Drained
	highWater   int

	closed bool  // Close was called
	gone   error // why the connection closed (Closed), or nil while it is open

	rd, wd deadline

	flushFn, resumeFn, closeFn func() // method values, made once: posting them allocates nothing
}

// A deadline is a point in time after which a hijacked connection's reads (or writes) fail, and
// the timer that wakes a Read (or Write) waiting at that moment.
type deadline struct {
	at    time.Time
	timer *time.Timer
}

// newHijackState returns the state of a connection from remote about to be hijacked on l; its
// core.Conn and high-water mark follow once it is handed over.
func newHijackState(l *core.Loop, remote net.Addr) *hijackState {
	s := &hijackState{loop: l, remote: remote, local: localAddrOf(remote)}
	s.cond.L = &s.mu
	s.flushFn, s.resumeFn, s.closeFn = s.flush, s.resume, s.closeOnLoop
	return s
}

// localAddrOf returns the address a hijacked connection reports as its local one: core does not
// say which of the server's addresses a connection came in on, so the unspecified address of the
// client's family stands for it.
func localAddrOf(remote net.Addr) net.Addr {
	if a, ok := remote.(*net.TCPAddr); ok && a.IP.To4() == nil {
		return &net.TCPAddr{IP: net.IPv6unspecified}
	}
	return &net.TCPAddr{IP: net.IPv4zero}
}

// Receive takes what fits of the client's bytes for the handler, and stops the loop reading the
// socket once in is full. It never takes nothing (which core would read as a protocol stuck on a
// full buffer): reading stops as soon as in fills, before a Receive could find it full.
func (s *hijackState) Receive(c *core.Conn, in []byte) int {
	s.mu.Lock()
	n := min(len(in), inBound-(len(s.in)-s.inOff))
	if n > 0 {
		if s.inOff > 0 {
			k := copy(s.in, s.in[s.inOff:])
			s.in, s.inOff = s.in[:k], 0
		}
		if s.in == nil && n <= largeBufferSize {
			s.in = getBuffer(bufferClass(n))
		}
		s.in = append(s.in, in[:n]...)
		s.cond.Broadcast()
	}
	pause := len(s.in)-s.inOff >= inBound
	s.paused = s.paused || pause
	s.mu.Unlock()
	if pause {
		c.PauseReading() // outside mu: core may close the connection here, and Closed takes mu
	}
	return n
}

// Drained lets the writers waiting for the output to go under the high-water mark go on.
func (s *hijackState) Drained(*core.Conn) {
	s.mu.Lock()
	s.over = false
	s.cond.Broadcast()
	s.mu.Unlock()
}

// Timeout is never called: the connection's deadlines are the handler's side's (SetDeadline),
// and no core timeout is set.
func (s *hijackState) Timeout(*core.Conn) {}

// Shutdown ends the connection's input, as a client's half-close would: Read returns what has
// come and then io.EOF, so that a handler reading its connection (a WebSocket's read loop) ends
// and closes it; its writes still go out until then, or until the shutdown's grace period ends.
// net/http leaves hijacked connections alone at a shutdown; here the shutdown would otherwise
// wait its whole grace period for every one.
func (s *hijackState) Shutdown(c *core.Conn) {
	s.mu.Lock()
	s.eof = true
	s.cond.Broadcast()
	s.mu.Unlock()
	c.PauseReading()
}

// Closed wakes every waiter: reads return what is left and then io.EOF, writes fail with err.
func (s *hijackState) Closed(_ *core.Conn, err error) {
	s.mu.Lock()
	if err == nil {
		err = net.ErrClosed // the handler's own Close
	}
	s.gone = err
	s.releaseOut()
	s.cond.Broadcast()
	s.mu.Unlock()
}

// flush queues the handler's written bytes on the connection. It runs on the loop (posted by
// Write); core copies the bytes, so the buffer goes back to the pool at once.
func (s *hijackState) flush() {
	s.mu.Lock()
	b := s.out
	s.out = nil
	s.flushPosted = false
	gone := s.gone != nil
	s.mu.Unlock()
	if gone || len(b) == 0 {
		return
	}
	err := s.hc.Write(b)
	over := err == nil && s.hc.Buffered() > s.hc.HighWater()
	putBuffer(b)
	s.mu.Lock()
	s.over = s.over || over // Drained follows once the queue has gone under half the mark
	s.cond.Broadcast()      // out is empty again
	s.mu.Unlock()
}

// resume reads the socket again once the handler has read half of in. It runs on the loop.
func (s *hijackState) resume() {
	s.mu.Lock()
	s.resumePosted = false
	ok := s.paused && !s.eof && s.gone == nil
	s.paused = false
	s.mu.Unlock()
	if ok {
		s.hc.ResumeReading()
	}
}

// closeOnLoop closes the connection once the bytes written before have gone. It runs on the
// loop, after the flush of those bytes (posts run in order).
func (s *hijackState) closeOnLoop() { s.hc.Close() }

// releaseOut gives the output buffer back. s.mu is held.
func (s *hijackState) releaseOut() {
	if s.out != nil {
		putBuffer(s.out)
		s.out = nil
	}
}

// post runs f on the loop. A loop that has stopped has closed the connection already (Closed
// told the waiters), so nothing is lost when it refuses.
func (s *hijackState) post(f func()) { s.loop.Post(f) }

// A hijackedConn is the net.Conn that Hijack returns: its methods run on the handler's goroutines
// and reach the connection, which only its loop may touch, through the hijackState. It is a
// struct of its own so that the connection closes once the handler's code lets go of it without
// closing it (see Hijack), as net/http's does when its net.Conn is collected.
type hijackedConn struct{ s *hijackState }

// Read reads what the client has sent, waiting for it: the bytes that came behind the request's
// head first. It returns io.EOF once the client has closed its side (or the server is shutting
// down) and what it sent has been read.
func (hc *hijackedConn) Read(p []byte) (int, error) {
	s := hc.s
	s.mu.Lock()
	for !s.closed && !s.rd.passed() && len(s.in) == s.inOff && !s.eof && s.gone == nil && len(p) > 0 {
		s.cond.Wait()
	}
	runtime.KeepAlive(hc) // hc's cleanup must not close the connection while a Read waits on it
	switch {
	case s.closed:
		s.mu.Unlock()
		return 0, hc.opError("read", net.ErrClosed)
	case s.rd.passed():
		s.mu.Unlock()
		return 0, hc.opError("read", os.ErrDeadlineExceeded)
	case len(s.in) == s.inOff:
		s.mu.Unlock()
		if len(p) == 0 {
			return 0, nil
		}
		return 0, io.EOF
	}
	n := copy(p, s.in[s.inOff:])
	s.inOff += n
	if s.inOff == len(s.in) {
		putBuffer(s.in) // an idle connection holds no buffer
		s.in, s.inOff = nil, 0
	}
	resume := s.paused && !s.resumePosted && len(s.in)-s.inOff <= inBound/2 && !s.eof && s.gone == nil
	s.resumePosted = s.resumePosted || resume
	s.mu.Unlock()
	if resume {
		s.post(s.resumeFn)
	}
	return n, nil
}

// Write hands p to the loop, which queues it for the client, and returns: p is copied. While
// the connection's output is past its high-water mark (core.Options.WriteHighWater), a slow
// client's, Write waits before it takes p, so that a write that times out has written nothing.
func (hc *hijackedConn) Write(p []byte) (int, error) {
	s := hc.s
	s.mu.Lock()
	for len(p) > 0 && !s.closed && s.gone == nil && !s.wd.passed() && (s.over || len(s.out) >= s.highWater) {
		s.cond.Wait()
	}
	runtime.KeepAlive(hc)
	var err error
	switch {
	case s.closed:
		err = net.ErrClosed
	case s.gone != nil:
		err = s.gone
	case s.wd.passed():
		err = os.ErrDeadlineExceeded
	}
	if err != nil || len(p) == 0 {
		s.mu.Unlock()
		if err != nil {
			return 0, hc.opError("write", err)
		}
		return 0, nil
	}
	if s.out == nil && len(p) <= largeBufferSize {
		s.out = getBuffer(bufferClass(len(p)))
	}
	s.out = append(s.out, p...)
	flush := !s.flushPosted
	s.flushPosted = true
	s.mu.Unlock()
	if flush {
		s.post(s.flushFn)
	}
	return len(p), nil
}

// Close closes the connection once what was written before has gone out. Reads and writes
// waiting return at once with an error wrapping net.ErrClosed, as later ones do.
func (hc *hijackedConn) Close() error {
	s := hc.s
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return hc.opError("close", net.ErrClosed)
	}
	s.closed = true
	s.rd.end()
	s.wd.end()
	s.cond.Broadcast()
	s.mu.Unlock()
	s.post(s.closeFn)
	return nil
}

// LocalAddr returns the unspecified address of the client's family, on port 0: core does not
// say which of the server's addresses the connection came in on.
func (hc *hijackedConn) LocalAddr() net.Addr { return hc.s.local }

// RemoteAddr returns the client's address.
func (hc *hijackedConn) RemoteAddr() net.Addr { return hc.s.remote }

// SetDeadline sets the read and write deadlines.
func (hc *hijackedConn) SetDeadline(t time.Time) error {
	hc.SetReadDeadline(t)
	return hc.SetWriteDeadline(t)
}

// SetReadDeadline makes reads fail with os.ErrDeadlineExceeded from t on, a Read waiting then
// included; the zero t removes the deadline.
func (hc *hijackedConn) SetReadDeadline(t time.Time) error {
	return hc.s.setDeadline(&hc.s.rd, t)
}

// SetWriteDeadline makes writes fail with os.ErrDeadlineExceeded from t on, a Write waiting for
// a slow client then included; the zero t removes the deadline.
func (hc *hijackedConn) SetWriteDeadline(t time.Time) error {
	return hc.s.setDeadline(&hc.s.wd, t)
}

// opError wraps err as a net.Conn's errors are: Timeout() is true for os.ErrDeadlineExceeded,
// and errors.Is finds net.ErrClosed after Close.
func (hc *hijackedConn) opError(op string, err error) error {
	return &net.OpError{Op: op, Net: "tcp", Source: hc.s.local, Addr: hc.s.remote, Err: err}
}

// setDeadline sets d to t and arms its timer to wake the waiters at t.
func (s *hijackState) setDeadline(d *deadline, t time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
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
		s.cond.Broadcast()
	case d.timer == nil:
		d.timer = time.AfterFunc(wait, func() { s.deadlineDue(d) })
	default:
		d.timer.Reset(wait)
	}
	return nil
}

// deadlineDue is d's timer: it wakes the waiters once d has passed, or waits again for a
// deadline that was moved, or whose time the wall clock has not reached yet.
func (s *hijackState) deadlineDue(d *deadline) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if d.at.IsZero() {
		return
	}
	if wait := time.Until(d.at); wait > 0 {
		d.timer.Reset(wait)
		return
	}
	s.cond.Broadcast()
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

// newHijackedConn returns the net.Conn of the hijacked connection s, which closes it when the
// handler's code drops it unclosed. The cleanup refers to s alone: the loop keeps s (it is the
// connection's Protocol), and s never refers to the hijackedConn.
func newHijackedConn(s *hijackState) *hijackedConn {
	hc := &hijackedConn{s: s}
	runtime.AddCleanup(hc, (*hijackState).abandon, s)
	return hc
}

// abandon closes a connection whose net.Conn was collected unclosed.
func (s *hijackState) abandon() {
	s.mu.Lock()
	closed := s.closed
	s.closed = true
	s.rd.end()
	s.wd.end()
	s.mu.Unlock()
	if !closed {
		s.post(s.closeFn)
	}
}

var _ net.Conn = (*hijackedConn)(nil)
