package serve

import (
	"net/netip"
	"runtime/debug"
	"sync/atomic"

	"github.com/dwellhttp/dwell/core/internal/engine"
	"github.com/dwellhttp/dwell/core/internal/netpoll"
	"github.com/dwellhttp/dwell/core/internal/wire"
)

// A Loop is one event loop: one goroutine that owns a poller (epoll on Linux), the connections it
// accepted, their timers, the coroutines their handlers run in, and an inbox through which other
// goroutines reach it. Nothing else touches what a Loop owns; handlers of one Loop never run in
// parallel.
type Loop struct {
	engine.Loop // the poller, the clock, the timers, the buffers, the transports, the turn

	srv  *Server
	Opts *Options

	inbox    *engine.Inbox[task]
	handlers []Handler // by listener, what serves the requests that come by it
	accTimer Timer     // ends an accept backoff

	Conns     []*Socket // by file descriptor
	NConns    int       // the connections open on the loop
	lingering int       // handlers still under way for exchanges that have closed (Linger)
	nreqs     int       // requests taken from the pool and not yet given back: running, parked or detached
	Serial    uint32    // of the last connection opened

	ready       []*Ctx     // parked handlers to resume at the top of the next iteration
	Pending     []Exchange // exchanges with requests (or a protocol's input) held over from their last turn
	coros       []*coro
	ctxs        []*Ctx
	Fields      []wire.Field // the field table of the head being parsed
	chunkedFree []*wire.ChunkedDecoder

	current  *Ctx // the handler whose coroutine is running, if any
	TurnLeft int  // requests the connection being served may still start in this turn (http1's conn.serve)

	// A continuation to run, and what to pass it, in the coroutine switchTo is about to resume
	// instead of a handler: the coroutine takes them as it starts (newCoro). Kept here rather
	// than in each coro, since one coroutine runs at a time, so that a parked request's
	// coroutine is smaller.
	k    func(*Ctx, error)
	kerr error

	// Who is running the loop's code now (see owner.go): the coroutine switched into, or nil
	// when it is the loop's own goroutine, which then runs hooked's completion hooks or the
	// loop's own work.
	running       atomic.Pointer[coro]
	hooked        *Ctx
	loopGoroutine                          // which goroutine is the loop's (owner.go)
	work          loopWork                 // what the running handler asked to run on the loop's stack (loopstack.go)
	extras        []*ctxExtra              // empty ones handed-over requests gave back (Loop.getExtra)
	given         map[int32]netip.AddrPort // peers ServeConn gave, by descriptor, while connected

	label      string // the loop's goroutines' profiler label (labelLoop)
	statsState        // see stats.go

	handed  []*Conn // by file descriptor, the connections handed over from HTTP (handover.go)
	toFlush []*Conn // handed-over connections written to outside their own turn

	Mux     any    // what the server's Multiplexer keeps on the loop (Multiplexer.NewLoop)
	first   First  // the server's First: HTTP/1.1
	Scratch []byte // what is built to be queued at once (a chunked body's trailer section)

	Shutting bool // stop accepting; close connections as they go idle
	done     chan struct{}
}

// initialConns is the number of connections the loop's tables are first sized for.
const initialConns = 8192

// readBufSize is the size of each loop's shared read buffer; it is raised when MaxHeaderBytes
// needs more, since a whole head must fit.
const readBufSize = 64 << 10

// newLoop makes loop id, which takes its listening socket of each of the server's listeners: if
// it fails, it closes them (those not shared) along with whatever else it opened. s.mu is held.
func newLoop(s *Server, id int) (*Loop, error) {
	lns := make([]engine.Listener, len(s.Listenings))
	handlers := make([]Handler, len(s.Listenings))
	useTLS := false
	for i, ls := range s.Listenings {
		fd := -1
		if ls.FDs != nil {
			fd = ls.FDs[id]
		}
		handlers[i] = ls.Handler
		if handlers[i] == nil {
			handlers[i] = s.handler
		}
		lns[i] = engine.Listener{FD: fd, Shared: ls.shared >= 0, Defers: fd >= 0 && netpoll.DefersAccept(fd), TLS: ls.TLS}
		useTLS = useTLS || ls.TLS
	}
	fail := func(err error) (*Loop, error) {
		for _, ln := range lns {
			if ln.FD >= 0 && !ln.Shared {
				netpoll.Close(ln.FD)
			}
		}
		return nil, err
	}
	if TestHookNewLoop != nil {
		if err := TestHookNewLoop(id); err != nil {
			return fail(err)
		}
	}
	p, err := s.newPoller()
	if err != nil {
		return fail(err)
	}
	ib, err := engine.NewInbox[task]()
	if err != nil {
		p.Close()
		return fail(err)
	}
	// The tables that grow with the connections (Timers, Conns) start large enough for
	// thousands of them: growing copies them and leaves the old arrays as garbage, while the
	// pages of a fresh allocation cost memory only once they are written.
	l := &Loop{
		Loop: engine.Loop{
			ID: id, Log: s.opts.Logger, Poll: p, Wakeup: ib.FD(), Acc: engine.NewAcceptor(lns, p, s.opts.Logger, id),
			Buf:    make([]byte, max(readBufSize, s.opts.MaxHeaderBytes+4096)),
			IOV:    netpoll.NewIOVecs(engine.MaxIOVecs),
			Timers: engine.NewHeap(2 * initialConns),
			Clk:    engine.NewClock(),
		},
		srv: s, Opts: &s.opts, first: s.first, inbox: ib, handlers: handlers,
		Conns: make([]*Socket, 0, initialConns),
		done:  make(chan struct{}),
	}
	if s.mux != nil {
		l.Mux = s.mux.NewLoop(l)
	}
	l.label = loopLabel(loopSerial.Add(1))
	l.Plain = engine.NewPlain(&l.Counts, l.Poll)
	if useTLS {
		l.TLS = l.newTLS(s.tlsConfig)
	}
	l.accTimer = Timer{l: l, f: l.acceptRetry}
	l.accTimer.t.Init(timerFunc)
	err = p.Add(ib.FD(), 0, netpoll.WatchRead)
	if err == nil {
		err = l.Acc.Listen()
	}
	if err != nil {
		l.closeFds() // the listener too
		ib.Close()
		return nil, err
	}
	return l, nil
}

// TestHookNewLoop, when set by a test, runs first in newLoop and fails it with its error.
var TestHookNewLoop func(id int) error

// run is the loop's goroutine: the engine's turns (engine.Loop.Run), which call the loop as
// their Driver. A handler is only ever resumed from the driver's turn (runReady, after the
// tasks and timers that made it ready), never from inside another handler.
func (l *Loop) run() {
	l.noteGoroutine()
	l.labelLoop()
	defer l.exit()
	l.Run((*driver)(l))
}

// A driver is a Loop as its engine.Loop's Driver, and as its Acceptor's host.
type driver Loop

// Event handles a connection's readiness. An event for a descriptor the loop no longer owns is
// dropped: a connection closed earlier in the batch (the serial tells a reused descriptor).
func (d *driver) Event(ev *netpoll.Event) {
	if fd := ev.FD(); fd < len(d.Conns) {
		if c := d.Conns[fd]; c != nil && c.Serial == ev.Tag() {
			c.onEvent(ev)
		}
	}
}

func (d *driver) Posted()         { (*Loop)(d).runInbox() }
func (d *driver) Accept(ln int)   { (*Loop)(d).accept(ln) }
func (d *driver) Due(t *timer)    { (*Loop)(d).runTimer(t) }
func (d *driver) Busy() bool      { return len(d.ready) > 0 || len(d.Pending) > 0 }
func (d *driver) Full() bool      { return (*Loop)(d).atMaxConns() }
func (d *driver) Open(fd, ln int) { (*Loop)(d).open(fd, ln) }

// Turn resumes the handlers made ready and gives the connections held over their turn.
func (d *driver) Turn() {
	l := (*Loop)(d)
	l.runReady()
	l.runPending()
}

// Flush writes the handed-over connections written to outside their own turn.
func (d *driver) Flush() {
	if len(d.toFlush) > 0 {
		(*Loop)(d).flushHanded()
	}
}

// Finished reports that the loop is done: shutting down, with no connection and no request
// left — a handler held on work that must run to its end (wait.Do) outlives its connection,
// and the loop waits for it.
func (d *driver) Finished() bool { return d.Shutting && d.NConns == 0 && d.nreqs == 0 }

func (l *Loop) runInbox() {
	q := l.inbox.Take()
	for i := range q {
		t := &q[i]
		if t.f != nil {
			l.safely(t.f)
			continue
		}
		if cx := t.w.c; cx != nil && cx.gen == t.w.gen && cx.Active() {
			cx.Resume(t.err)
		}
	}
	l.inbox.Recycle(q)
}

// runReady resumes the handlers woken since the last iteration. Handlers woken while this runs
// wait for the next iteration, which polls first, so a handler that keeps waking another cannot
// starve the sockets.
func (l *Loop) runReady() {
	n := len(l.ready)
	for i := 0; i < n; i++ {
		cx := l.ready[i]
		l.ready[i] = nil
		l.resume(cx)
	}
	rest := copy(l.ready, l.ready[n:])
	clear(l.ready[rest:])
	l.ready = l.ready[:rest]
}

// runPending gives the connections that hit the per-turn bound their next turn.
func (l *Loop) runPending() {
	n := len(l.Pending)
	for i := 0; i < n; i++ {
		ex := l.Pending[i]
		l.Pending[i] = nil
		if ex.Base().State != StClosed {
			ex.GoOn()
		}
	}
	rest := copy(l.Pending, l.Pending[n:])
	clear(l.Pending[rest:])
	l.Pending = l.Pending[:rest]
}

// safely runs f on the loop, logging a panic instead of letting it take the loop down: for
// the callbacks the loop runs outside any request's coroutine (Post, AfterFunc, OnDone, a
// Protocol's methods). It reports whether f panicked, for the callers that must not go on as if
// it had not (a Protocol's connection closes: Conn.CallProtocol); the others ignore it.
func (l *Loop) safely(f func()) (panicked bool) {
	l.SW.EnterApp()
	defer func() {
		if l.SW.Noted() {
			l.noteStall(l.hooked) // a hook's request, or none
		}
		l.SW.LeaveApp()
		if r := recover(); r != nil {
			panicked = true
			l.Log.Error("dwell: panic in a function run by the loop", "loop", l.ID, "panic", r,
				"stack", string(debug.Stack()))
		}
	}()
	f()
	return false
}

// A task is work posted to a loop from any goroutine: a function to run, or a wake-up for a
// parked handler (kept apart from f so that waking allocates nothing).
type task struct {
	f   func()
	w   Waker
	err error
}

// Post runs f on the loop's goroutine, from any goroutine. Posts are never lost: f runs, in
// order with the loop's other posts, unless the loop has stopped, which Post reports as
// ErrShutdown. f runs outside any request: it must not block, and cannot park; a panic in it is
// logged and the loop goes on.
func (l *Loop) Post(f func()) error {
	if !l.inbox.Post(task{f: f}) {
		return ErrShutdown
	}
	return nil
}

func (l *Loop) exit() {
	defer l.forgetGoroutine()
	for _, c := range l.Conns {
		if c != nil {
			c.Close(ErrShutdown)
		}
	}
	l.runReady() // let woken handlers see ErrShutdown and return
	for _, co := range l.coros {
		co.end()
	}
	l.coros = nil
	for _, t := range l.inbox.Close() {
		if t.f != nil {
			l.safely(t.f)
		}
	}
	l.closeFds()
	close(l.done)
}

func (l *Loop) closeFds() {
	l.Acc.Close(l.srv.leaveShared) // the last loop to stop accepting closes a shared listener
	l.Poll.Close()
}
