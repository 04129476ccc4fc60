package engine

import (
	"net"
	"sync"
	"time"

	"github.com/dwellhttp/dwell/internal/bufpool"
)

// A connection handed over to goroutines spans two sides: the goroutines', which read and write
// it as a net.Conn (goNetConn), and the loop's, which owns the socket (GoConn, fed by the
// protocol the connection is handed over to). They meet in the connection's RemoteState, under
// its mutex:
//
//	client → loop's read buffer → Take → in (at most InBound) → Read
//	Write → out (at most the high-water mark) → post → LoopConn.Write → write queue → client
//
// A Read waits on the state's condition variable for Take to bring bytes; a Write waits there
// while the connection's output is past its high-water mark, until it drains. When in is full
// the loop stops reading the socket, so that the client's further bytes wait in the kernel and
// TCP's flow control holds the client back, and reads again once the goroutines have read half.
// Deadlines are timers of the goroutines' side: when one passes, it wakes the waiters, which
// return os.ErrDeadlineExceeded. The state costs nothing on the loop but the GoConn: no
// coroutine, no goroutine, and no buffer while nothing is in flight (the buffers come from the
// shared pool and go back once emptied).

// InBound is how many received bytes a connection handed over to goroutines holds for them
// before the loop stops reading it: room for a burst of messages, and a bound on what a client
// that sends faster than its goroutines read can make the server hold.
const InBound = 64 << 10

// A RemoteState is what the goroutine side of a handed-over connection shares with its loop,
// under Mu: whether the output is past its high-water mark, whether the connection has closed
// and why. Cond (on Mu) is broadcast at each change. The loop calls SetOver, Drained and
// Closed before the connection's protocol hears of the same.
type RemoteState struct {
	Mu   sync.Mutex
	Cond sync.Cond // on Mu: the output drained, the connection closed, or a GoConn's state changed
	Over bool      // the output went past the high-water mark and has not drained yet
	Done bool      // the connection has closed
	Err  error     // why it closed: nil after a close of its protocol's own
}

// Init readies r for a connection whose output is past its high-water mark or not (over), and
// closed or not (done).
func (r *RemoteState) Init(over, done bool) {
	r.Over, r.Done = over, done
	r.Cond.L = &r.Mu
}

// SetOver says that the output went past the high-water mark.
func (r *RemoteState) SetOver() {
	r.Mu.Lock()
	r.Over = true
	r.Mu.Unlock()
}

// Drained says that the output is back under the high-water mark, waking the writers that waited.
func (r *RemoteState) Drained() {
	r.Mu.Lock()
	r.Over = false
	r.Cond.Broadcast()
	r.Mu.Unlock()
}

// Closed says that the connection has closed, for err (nil for a close of its protocol's own),
// waking every waiter.
func (r *RemoteState) Closed(err error) {
	r.Mu.Lock()
	r.Done, r.Err = true, err
	r.Cond.Broadcast()
	r.Mu.Unlock()
}

// WaitDrained waits while the output is past the high-water mark, until it drains or the
// connection closes, and reports whether it is open.
func (r *RemoteState) WaitDrained() bool {
	r.Mu.Lock()
	defer r.Mu.Unlock()
	for r.Over && !r.Done {
		r.Cond.Wait()
	}
	return !r.Done
}

// A LoopConn is the loop side of a connection handed over to goroutines: its methods run on the
// loop.
type LoopConn interface {
	// Write queues p for the client (copied).
	Write(p []byte) error
	// Close closes the connection once what was queued before has gone out.
	Close()
	// ResumeReading reads the socket again, after the protocol paused it.
	ResumeReading()
}

// A Poster runs functions on a connection's loop, in the order they were posted.
type Poster interface {
	Post(f func()) error
}

// A GoConn is a connection handed over to goroutines, as the loop sees it: what the protocol it
// is handed over to passes on (Take, EndInput, Release), and the state its net.Conn shares with
// it, guarded by the RemoteState's mutex (r.Mu), whose condition variable (r.Cond) also says that
// bytes came in, or a deadline passed. hc is the loop's alone.
type GoConn struct {
	l             Poster
	hc            LoopConn     // set on the loop (Start), before the protocol passes anything on
	r             *RemoteState // hc's: Over, Done and Err are the output's and the connection's state
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

// A deadline is a point in time after which a GoConn's reads (or writes) fail, and the timer
// that wakes a Read (or Write) waiting at that moment.
type deadline struct {
	at    time.Time
	timer *time.Timer
}

// NewGoConn returns the loop side of a connection to be handed over to goroutines, whose loop
// is l, with the addresses its net.Conn reports.
func NewGoConn(l Poster, local, remote net.Addr) *GoConn {
	h := &GoConn{l: l, local: local, remote: remote}
	h.flushFn, h.resumeFn, h.closeFn = h.flush, h.resume, h.closeOnLoop
	return h
}

// Start completes the hand-over, on the loop: hc is the connection's loop side, r its shared
// state, and highWater the output it holds before writers wait. It returns the net.Conn any
// goroutine may read and write.
func (h *GoConn) Start(hc LoopConn, r *RemoteState, highWater int) net.Conn {
	h.hc, h.r, h.highWater = hc, r, highWater
	return newGoNetConn(h)
}

// Held returns how many bytes the GoConn behind conn, a net.Conn of Start's, holds for its
// goroutines, and whether the loop has stopped reading its socket: for tests of the bound.
func Held(conn net.Conn) (n int, paused bool) {
	h := conn.(*goNetConn).h
	h.r.Mu.Lock()
	defer h.r.Mu.Unlock()
	return len(h.in) - h.inOff, h.paused
}

// Take takes what fits of the client's bytes for the goroutines, and reports when in is full:
// the loop is then to stop reading the socket (the Protocol's Receive pauses it), until the
// goroutines have read half. It never takes nothing (which a loop would read as a protocol stuck
// on a full buffer): reading stops as soon as in fills, before a Take could find it full.
func (h *GoConn) Take(in []byte) (n int, full bool) {
	h.r.Mu.Lock()
	n = min(len(in), InBound-(len(h.in)-h.inOff))
	if n > 0 {
		if h.inOff > 0 {
			k := copy(h.in, h.in[h.inOff:])
			h.in, h.inOff = h.in[:k], 0
		}
		if h.in == nil && n <= goConnLarge {
			h.in = bufpool.Get(goConnBuffer(n))
		}
		h.in = append(h.in, in[:n]...)
		h.r.Cond.Broadcast()
	}
	full = len(h.in)-h.inOff >= InBound
	h.paused = h.paused || full
	h.r.Mu.Unlock()
	return n, full
}

// EndInput ends the connection's input, as a client's half-close would: Read returns what has
// come and then io.EOF. The loop stops reading the socket.
func (h *GoConn) EndInput() {
	h.r.Mu.Lock()
	h.eof = true
	h.r.Cond.Broadcast()
	h.r.Mu.Unlock()
}

// Release lets the output buffer go, once the connection has closed. The shared state, told
// first (RemoteState.Closed), has woken every waiter: reads return what is left and then io.EOF,
// writes fail with the connection's error (gone).
func (h *GoConn) Release() {
	h.r.Mu.Lock()
	h.releaseOut()
	h.r.Mu.Unlock()
}

// gone returns why the connection closed, nil while it is open: the loop side's error, or
// net.ErrClosed for a close of the net.Conn's own. h.r.Mu is held.
func (h *GoConn) gone() error {
	switch {
	case !h.r.Done:
		return nil
	case h.r.Err != nil:
		return h.r.Err
	}
	return net.ErrClosed
}

// flush queues the goroutines' written bytes on the connection. It runs on the loop (posted by
// Write); the loop side copies the bytes, so the buffer goes back to the pool at once.
func (h *GoConn) flush() {
	h.r.Mu.Lock()
	b := h.out
	h.out = nil
	h.flushPosted = false
	gone := h.r.Done
	h.r.Mu.Unlock()
	if gone || len(b) == 0 {
		return
	}
	h.hc.Write(b) // past the high-water mark, the shared state is told: writers wait until it drains
	bufpool.Put(b)
	h.r.Mu.Lock()
	h.r.Cond.Broadcast() // out is empty again
	h.r.Mu.Unlock()
}

// resume reads the socket again once the goroutines have read half of in. It runs on the loop.
func (h *GoConn) resume() {
	h.r.Mu.Lock()
	h.resumePosted = false
	ok := h.paused && !h.eof && !h.r.Done
	h.paused = false
	h.r.Mu.Unlock()
	if ok {
		h.hc.ResumeReading()
	}
}

// closeOnLoop closes the connection once the bytes written before have gone. It runs on the
// loop, after the flush of those bytes (posts run in order).
func (h *GoConn) closeOnLoop() { h.hc.Close() }

// releaseOut gives the output buffer back. h.r.Mu is held.
func (h *GoConn) releaseOut() {
	if h.out != nil {
		bufpool.Put(h.out)
		h.out = nil
	}
}

// post runs f on the loop. A loop that has stopped has closed the connection already (the shared
// state told the waiters), so nothing is lost when it refuses.
func (h *GoConn) post(f func()) { h.l.Post(f) }

// A handed connection's buffers, from the shared pool: a small one, as net/http's (4 KiB), and a
// large one once more than that is in flight, io.Copy's piece.
const (
	goConnSmall = 4 << 10
	goConnLarge = 32 << 10
)

// goConnBuffer returns the size of the buffer for n bytes: the small one when they fit, else the
// large one (which n may still overflow: append then grows it off the pool).
func goConnBuffer(n int) int {
	if n <= goConnSmall {
		return goConnSmall
	}
	return goConnLarge
}
