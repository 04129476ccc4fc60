package serve

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"sync"
	"sync/atomic"

	"github.com/dwellhttp/dwell/core/internal/netpoll"
)

// A Server serves its First's protocol, HTTP/1.1 (and its Multiplexer's, HTTP/2), with one or
// more event loops, on one address or several (plain and TLS, each with its own handler if it
// likes: AddListener). Create it with NewServer, and give it its First (SetFirst) before it
// listens; start it with ListenAndServe (or Listen then ListenAndServe, to learn the addresses
// first) or Serve; stop it with Shutdown, which stops them all.
type Server struct {
	handler   Handler
	opts      Options
	tlsConfig *tls.Config // the configuration the loops serve TLS with, or nil (servertls.go)
	first     First       // HTTP/1.1
	mux       Multiplexer // the protocol besides HTTP/1.1 (HTTP/2), or nil

	Mu          sync.Mutex   // guards the loops and listeners while the server starts and stops
	Loops       []*Loop      // made by Serve
	Listenings  []*listening // Options.Addr's (or Serve's), then AddListener's (listener.go)
	ln          net.Listener // the listener given to Serve, closed by Shutdown
	started     bool
	shutdown    bool
	ringRefused bool          // io_uring could not be used: the loops poll with epoll (poller.go)
	Done        chan struct{} // closed when every loop has stopped
	Ready       chan struct{} // closed once serve has made the loops, failed to, or Shutdown came first
	// onShutdown are RegisterOnShutdown's functions, started by the first Shutdown; stopping
	// is set then, and a function registered later starts at once.
	onShutdown []func()
	stopping   bool

	handed       atomic.Uint32 // ServeConn's connections so far: the next goes to loop handed % n
	Misuses      atomic.Int64  // calls refused by a Ctx that was not theirs (see owner.go)
	misuseLogged atomic.Bool
}

// NewServer returns a Server that runs h for every request, configured by o (whose zero value
// works).
func NewServer(h Handler, o Options) *Server {
	s := &Server{handler: h, opts: o.normalize(), Done: make(chan struct{}), Ready: make(chan struct{})}
	s.Listenings = []*listening{{Listener: Listener{Addr: s.opts.Addr}, shared: -1}}
	return s
}

// Listen opens the listening sockets on Options.Addr and on the addresses of AddListener — on
// Linux one per loop, with SO_REUSEPORT when there are several; elsewhere one that the loops
// share — without serving yet, so that Addr and Addrs are known (port 0 picks a free port).
// ListenAndServe calls it if it has not been called. When an address cannot be opened, none
// that this call opened stays open.
func (s *Server) Listen() error {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	if s.shutdown {
		return ErrServerClosed
	}
	return s.listen(s.Listenings)
}

// listen opens those of lns not open yet. s.mu is held.
func (s *Server) listen(lns []*listening) error {
	var opened []*listening
	for _, ls := range lns {
		if ls.FDs != nil {
			continue
		}
		if err := ls.open(&s.opts); err != nil {
			for _, o := range opened {
				o.close(0)
			}
			return err
		}
		opened = append(opened, ls)
	}
	return nil
}

// ListenAndServe listens on Options.Addr and the addresses of AddListener (unless Listen
// already did) and serves until Shutdown, after which it returns ErrServerClosed.
func (s *Server) ListenAndServe() error {
	if err := s.Listen(); err != nil {
		return err
	}
	return s.serve()
}

// Serve serves connections accepted from ln, in place of Options.Addr, and those of the
// addresses of AddListener, until Shutdown, after which it returns ErrServerClosed. ln must be
// a TCP listener with a file descriptor (as net.Listen returns); with several loops all of them
// accept from it. With a nil ln the server listens on no address of Options.Addr's: it serves
// what AddListener added, if anything, and the connections ServeConn hands it. After Listen,
// which opened Options.Addr, Serve with a listener fails: serve that with ListenAndServe.
func (s *Server) Serve(ln net.Listener) error {
	if ln == nil {
		s.Mu.Lock()
		err := s.listen(s.Listenings[1:])
		s.Mu.Unlock()
		if err != nil {
			return err
		}
		return s.serve()
	}
	fd, err := netpoll.ListenerFD(ln)
	if err != nil {
		return err
	}
	s.Mu.Lock()
	main := s.Listenings[0]
	if s.started || s.shutdown {
		s.Mu.Unlock()
		return s.serve() // refused below: serving, or shut down
	}
	if main.FDs != nil {
		s.Mu.Unlock()
		return errors.New("dwell: Serve with a listener after Listen: the server listens on Options.Addr already (serve it with ListenAndServe)")
	}
	s.ln = ln
	main.share(fd, s.opts.Loops)
	if a, ok := ln.Addr().(*net.TCPAddr); ok {
		main.addr = a
	}
	err = s.listen(s.Listenings[1:])
	s.Mu.Unlock()
	if err != nil {
		return err
	}
	return s.serve()
}

// serve makes the loops, each taking its socket of every listener, runs them, and waits for
// them to stop.
func (s *Server) serve() error {
	s.Mu.Lock()
	if s.shutdown {
		s.Mu.Unlock()
		return ErrServerClosed
	}
	if s.started {
		s.Mu.Unlock()
		return errors.New("dwell: server already serving")
	}
	if err := s.prepareTLS(); err != nil {
		s.abandonStart(0)
		s.Mu.Unlock()
		return err
	}
	s.started = true
	for i := range s.opts.Loops {
		l, err := newLoop(s, i)
		if err != nil {
			s.abandonStart(i + 1)
			s.Mu.Unlock()
			return err
		}
		s.Loops = append(s.Loops, l)
	}
	s.announceReady()
	loops := s.Loops
	s.Mu.Unlock()
	for _, l := range loops {
		go l.run()
	}
	stopWatch, watchDone := make(chan struct{}), make(chan struct{})
	if t := s.opts.StallThreshold; t > 0 {
		// The stall detector's watchdog: the one goroutine of a server's beside its loops, since
		// a loop that is blocked cannot report itself (stall.go). It reads each loop's turn
		// through atomics and touches no socket.
		go func() {
			defer close(watchDone)
			s.watch(loops, t, stopWatch)
		}()
	} else {
		close(watchDone)
	}
	for _, l := range loops {
		<-l.done
	}
	close(stopWatch)
	<-watchDone     // no goroutine of the server's outlives it
	netpoll.Drain() // every last response on its way before the program may exit
	close(s.Done)
	return ErrServerClosed
}

// leaveShared is called by each loop that stops accepting from listener i's shared socket;
// the last one closes it, so that new connections are refused from the start of a shutdown
// on, rather than queued until the server is gone.
func (s *Server) leaveShared(i int) {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	ls := s.Listenings[i]
	ls.sharing--
	if ls.sharing == 0 && ls.shared >= 0 {
		netpoll.CloseListener(ls.shared)
		ls.shared = -1
	}
}

// announceReady closes s.ready, once: the loops are made (or will never be). s.mu is held.
func (s *Server) announceReady() {
	select {
	case <-s.Ready:
	default:
		close(s.Ready)
	}
}

// abandonStart undoes a start that failed at one loop: the loops made so far never ran, so
// their descriptors are closed here, with the listening sockets of the loops from rest on,
// which no loop took; the server is then closed, and a Shutdown returns at once. s.mu is held.
func (s *Server) abandonStart(rest int) {
	for _, l := range s.Loops {
		l.Acc.Pause()
		l.Acc.ForgetShared() // closed below, once
		l.closeFds()
		l.inbox.Close()
		close(l.done)
	}
	s.Loops = nil
	s.announceReady()
	for _, ls := range s.Listenings {
		if ls.FDs != nil {
			ls.close(rest)
		}
	}
	s.shutdown = true
	close(s.Done)
}

// Addr returns the address the server listens on — Options.Addr's, or that of the listener
// given to Serve — once Listen or Serve has been called (nil before). Addrs has the others.
func (s *Server) Addr() net.Addr {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	if s.Listenings[0].addr == nil {
		return nil
	}
	return s.Listenings[0].addr
}

// Shutdown stops the server gracefully: it stops accepting — every loop takes the connections
// already queued and closes its listening sockets before any connection is told, so that a
// client that connects again is refused, not reset — closes idle connections (serving first a
// request that has arrived on one, and letting one whose head is arriving finish it), and lets
// running and parked handlers finish, closing each connection after its response; waits that
// asked for it (Seam.WakeOnShutdown: long polls, event streams) end at once with ErrShutdown.
// It returns nil once every connection has closed. When ctx ends first, Shutdown returns
// ctx.Err() at once, after telling the loops that the grace period is over: the handlers still
// waiting, on HTTP/1.1 and HTTP/2 alike, are woken with ErrShutdown (their Context is
// cancelled), their answers still go out (503 from a handler that wrote none), and their
// connections close as they return — a connection handed over (a WebSocket's) at once, as does
// an HTTP/2 stream handed over, and an HTTP/2 stream still waiting for a handler's place is
// refused (REFUSED_STREAM); ListenAndServe (or Serve) returns once the last has closed.
func (s *Server) Shutdown(ctx context.Context) error {
	s.Mu.Lock()
	s.shutdown = true
	if !s.stopping {
		s.stopping = true
		startHooks(s.onShutdown...)
		s.onShutdown = nil
	}
	loops := s.Loops
	started := s.started
	if !started {
		for _, ls := range s.Listenings {
			if ls.FDs != nil {
				ls.close(0)
			}
		}
		s.announceReady()
	}
	ln := s.ln
	s.Mu.Unlock()
	if !started {
		return nil
	}
	// Every loop stops accepting before any connection hears of the shutdown: a client told
	// to go away (GOAWAY, Connection: close) connects again at once, and that connection must
	// be refused, not queued on a listening socket that another loop closes a moment later,
	// which resets it after its request went out.
	stopped := stopAccepting(ctx, loops)
	if ln != nil {
		ln.Close()
	}
	if stopped {
		for _, l := range loops {
			l.Post(l.beginShutdown)
		}
		select {
		case <-s.Done:
			return nil
		case <-ctx.Done():
		}
	}
	for _, l := range loops {
		l.Post(l.forceShutdown)
	}
	return ctx.Err()
}

// stopAccepting has every loop stop accepting (Loop.stopAccepting), and waits until they all
// have, or ctx ends first (false). A stalled loop delays the others' shutdown so, which an
// application that stalls its loops for a whole grace period pays with a forced one.
func stopAccepting(ctx context.Context, loops []*Loop) bool {
	stopped := make(chan struct{}, len(loops))
	posted := 0
	for _, l := range loops {
		if l.Post(func() { l.stopAccepting(); stopped <- struct{}{} }) == nil {
			posted++
		}
	}
	for range posted {
		select {
		case <-stopped:
		case <-ctx.Done():
			return false
		}
	}
	return true
}

// stopAccepting, on the loop: the first step of a shutdown. The connections already queued on
// its listening sockets are taken, and served as the others (a listening socket closed with
// connections queued resets them), and the sockets closed.
func (l *Loop) stopAccepting() {
	l.Acc.Drain((*driver)(l))
	l.Acc.Close(l.srv.leaveShared)
}

// RegisterOnShutdown registers f to be called, on a goroutine of its own, when Shutdown is first
// called: at the start of the grace period, as net/http's Server.RegisterOnShutdown. It is how
// work that the server cannot see learns that a shutdown has begun — the handlers behind the
// net/http bridge (a gRPC server's streams, whose requests' contexts end only with the grace
// period), goroutines following a topic, a connection pool of the application's — so that it
// can end what would otherwise hold the shutdown until the grace period ends: f should start
// that, and not wait for it. dwell's own waits need no hook (Seam.WakeOnShutdown). A function
// registered once Shutdown has been called starts at once.
func (s *Server) RegisterOnShutdown(f func()) {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	if s.stopping {
		startHooks(f)
		return
	}
	s.onShutdown = append(s.onShutdown, f)
}

// startHooks starts RegisterOnShutdown's functions, each on a goroutine of its own, as
// net/http does: they are the application's code, which may block, and no work of dwell's runs
// on these goroutines (the loops' and the stall watchdog's are the server's own).
func startHooks(fs ...func()) {
	for _, f := range fs {
		go f()
	}
}

// beginShutdown, on the loop: stop accepting, close what is idle, and let the rest finish.
func (l *Loop) beginShutdown() {
	if l.Shutting {
		return
	}
	l.Shutting = true
	l.Acc.Close(l.srv.leaveShared)
	for _, c := range l.Conns {
		if c == nil {
			continue
		}
		c.KeepAlive = false
		if c.State == StIdle || c.State == StHead {
			// Between requests, but the next may have arrived unread: what has arrived is
			// served (its response closes the connection), or takes the connection over
			// (HTTP/2's preface), before the connection is dealt with as below. With nothing,
			// it closes; in the middle of a request head, it is left to finish it, within
			// HeaderTimeout, as a request under way.
			l.first.Input(c)
		}
		if c.Ctx != nil && c.Ctx.Active() {
			c.Ctx.WakeForShutdown()
		}
		switch c.State {
		case StIdle:
			c.CloseAfterOutput(false)
		case StDrain:
			c.CloseAfterOutput(true)
		case StHandedOver:
			hc := c.Handed()
			hc.CallProtocol(hc.ProtocolShutdown)
		}
	}
}

// forceShutdown, on the loop: the grace period is over. Waiting handlers get ErrShutdown, on
// HTTP/1.1 connections and HTTP/2 streams alike (GraceEnder); every connection closes as soon
// as its handlers have returned, one handed over to another protocol at once.
func (l *Loop) forceShutdown() {
	l.beginShutdown()
	for _, c := range l.Conns {
		switch {
		case c == nil:
		case c.IsHanded():
			hc := c.Handed()
			if _, ok := hc.Proto.(GraceEnder); ok {
				hc.CallProtocol(hc.protocolEndGrace)
			} else {
				c.Close(ErrShutdown)
			}
		case c.Ctx != nil && c.Ctx.Active():
			c.Ctx.EndGrace()
		default:
			c.Close(ErrShutdown)
		}
	}
}
