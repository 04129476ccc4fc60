package core

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"sync"
	"sync/atomic"

	"github.com/dwellhttp/dwell/core/internal/netpoll"
)

// A Server serves HTTP/1.1 with one or more event loops. Create it with NewServer; start it with
// ListenAndServe (or Listen then ListenAndServe, to learn the address first) or Serve; stop it
// with Shutdown.
type Server struct {
	handler   Handler
	opts      Options
	tlsConfig *tls.Config // the configuration the loops serve TLS with, or nil (servertls.go)

	mu       sync.Mutex
	loops    []*Loop
	fds      []int        // listening sockets from Listen, handed to the loops
	addr     *net.TCPAddr // bound address
	ln       net.Listener // the listener given to Serve, closed by Shutdown
	shared   int          // descriptor shared by all loops (Serve), closed by the last to leave it
	sharing  int          // loops still accepting from shared
	started  bool
	shutdown bool
	done     chan struct{} // closed when every loop has stopped
	ready    chan struct{} // closed once serve has made the loops, failed to, or Shutdown came first

	misuses      atomic.Int64 // calls refused by a Ctx that was not theirs (see owner.go)
	misuseLogged atomic.Bool
}

// NewServer returns a Server that runs h for every request, configured by o (whose zero value
// works).
func NewServer(h Handler, o Options) *Server {
	return &Server{handler: h, opts: o.normalize(), shared: -1, done: make(chan struct{}), ready: make(chan struct{})}
}

// ListenAndServe serves h on addr with default options until the process ends.
func ListenAndServe(addr string, h Handler) error {
	return NewServer(h, Options{Addr: addr}).ListenAndServe()
}

// Listen opens the listening sockets on Options.Addr — on Linux one per loop, with
// SO_REUSEPORT when there are several; elsewhere one that the loops share — without serving
// yet, so that Addr is known (port 0 picks a free port). ListenAndServe calls it if it has not
// been called.
func (s *Server) Listen() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.shutdown {
		return ErrServerClosed
	}
	if s.fds != nil {
		return nil
	}
	addr, err := net.ResolveTCPAddr("tcp", s.opts.Addr)
	if err != nil {
		return err
	}
	n := s.opts.Loops
	if !netpoll.ReusePort {
		n = 1
	}
	for i := range n {
		fd, err := netpoll.Listen(addr, n > 1)
		if err == nil && !s.opts.DisableDeferAccept {
			netpoll.DeferAccept(fd, s.opts.deferAcceptSeconds())
		}
		if err == nil && i == 0 {
			// The other loops bind the port the first one got.
			addr, err = netpoll.BoundAddr(fd)
		}
		if err != nil {
			for _, fd := range s.fds {
				netpoll.Close(fd)
			}
			s.fds = nil
			return err
		}
		s.fds = append(s.fds, fd)
	}
	s.addr = addr
	return nil
}

// ListenAndServe listens on Options.Addr (unless Listen already did) and serves until Shutdown,
// after which it returns ErrServerClosed.
func (s *Server) ListenAndServe() error {
	if err := s.Listen(); err != nil {
		return err
	}
	s.mu.Lock()
	fds := s.fds
	if len(fds) < s.opts.Loops {
		// One listener for all the loops (no SO_REUSEPORT here): shared as under Serve.
		s.shared = fds[0]
		fds = netpoll.Share(fds[0], s.opts.Loops)
	}
	s.mu.Unlock()
	return s.serve(fds, s.shared >= 0)
}

// Serve serves connections accepted from ln until Shutdown, after which it returns
// ErrServerClosed. ln must be a TCP listener with a file descriptor (as net.Listen returns);
// with several loops all of them accept from it.
func (s *Server) Serve(ln net.Listener) error {
	fd, err := netpoll.ListenerFD(ln)
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.ln = ln
	s.shared = fd
	if a, ok := ln.Addr().(*net.TCPAddr); ok {
		s.addr = a
	}
	fds := netpoll.Share(fd, s.opts.Loops)
	s.mu.Unlock()
	return s.serve(fds, true)
}

func (s *Server) serve(fds []int, shared bool) error {
	s.mu.Lock()
	if s.shutdown {
		s.mu.Unlock()
		return ErrServerClosed
	}
	if s.started {
		s.mu.Unlock()
		return errors.New("dwell: server already serving")
	}
	if err := s.prepareTLS(); err != nil {
		s.abandonStart(fds, shared)
		s.mu.Unlock()
		return err
	}
	s.started = true
	if shared {
		s.sharing = len(fds)
	}
	for i, fd := range fds {
		l, err := newLoop(s, i, fd, shared)
		if err != nil {
			s.abandonStart(fds[i+1:], shared)
			s.mu.Unlock()
			return err
		}
		s.loops = append(s.loops, l)
	}
	s.announceReady()
	loops := s.loops
	s.mu.Unlock()
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
	close(s.done)
	return ErrServerClosed
}

// leaveShared is called by each loop that stops accepting from the shared listening socket;
// the last one closes it, so that new connections are refused from the start of a shutdown
// on, rather than queued until the server is gone.
func (s *Server) leaveShared() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sharing--
	if s.sharing == 0 && s.shared >= 0 {
		netpoll.Close(s.shared)
		s.shared = -1
	}
}

// abandonStart undoes a start that failed at one loop: the loops made so far never ran, so
// their descriptors are closed here, with the listeners no loop took; the server is then
// closed, and a Shutdown returns at once. s.mu is held.
// announceReady closes s.ready, once: the loops are made (or will never be). s.mu is held.
func (s *Server) announceReady() {
	select {
	case <-s.ready:
	default:
		close(s.ready)
	}
}

func (s *Server) abandonStart(rest []int, shared bool) {
	for _, l := range s.loops {
		if shared {
			l.pauseAccept() // the shared listener is closed below, once
			l.lfd = -1
		}
		l.closeFds()
		l.inbox.close()
		close(l.done)
	}
	s.loops = nil
	s.announceReady()
	if !shared {
		for _, fd := range rest {
			netpoll.Close(fd)
		}
	}
	s.fds = nil
	if s.shared >= 0 {
		netpoll.Close(s.shared)
		s.shared = -1
	}
	s.shutdown = true
	close(s.done)
}

// Addr returns the address the server listens on, once Listen or Serve has been called (nil
// before).
func (s *Server) Addr() net.Addr {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.addr == nil {
		return nil
	}
	return s.addr
}

// Shutdown stops the server gracefully: it stops accepting, closes idle connections, and lets
// running and parked handlers finish, closing each connection after its response; waits that
// asked for it (Ctx.WakeOnShutdown: long polls, event streams) end at once with ErrShutdown.
// It returns nil once every connection has closed. When ctx ends first, Shutdown returns
// ctx.Err() at once, after telling the loops that the grace period is over: the handlers still
// waiting are woken with ErrShutdown (their Context is cancelled) and their connections close
// as they return; ListenAndServe (or Serve) returns once the last has.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.shutdown = true
	loops := s.loops
	started := s.started
	if !started {
		for _, fd := range s.fds {
			netpoll.Close(fd)
		}
		s.fds = nil
		s.announceReady()
	}
	ln := s.ln
	s.mu.Unlock()
	if !started {
		return nil
	}
	for _, l := range loops {
		l.Post(l.beginShutdown)
	}
	if ln != nil {
		ln.Close()
	}
	select {
	case <-s.done:
		return nil
	case <-ctx.Done():
	}
	for _, l := range loops {
		l.Post(l.forceShutdown)
	}
	return ctx.Err()
}

// beginShutdown, on the loop: stop accepting, close what is idle, and let the rest finish.
func (l *Loop) beginShutdown() {
	if l.shutting {
		return
	}
	l.shutting = true
	l.closeListener()
	for _, c := range l.conns {
		if c == nil {
			continue
		}
		c.keepAlive = false
		if c.cx != nil && c.cx.active() {
			c.cx.wakeForShutdown()
		}
		switch c.state {
		case stIdle, stHead:
			c.closeAfterOutput(false)
		case stDrain:
			c.closeAfterOutput(true)
		case stHandedOver:
			hc := c.handed()
			l.safely(func() { hc.p.Shutdown(hc) })
		}
	}
}

// forceShutdown, on the loop: the grace period is over. Waiting handlers get ErrShutdown;
// every connection closes as soon as its handler has returned.
func (l *Loop) forceShutdown() {
	l.beginShutdown()
	l.forced = true
	for _, c := range l.conns {
		if c == nil {
			continue
		}
		if c.cx != nil && c.cx.active() && !c.isHanded() {
			c.cx.clientGone(ErrShutdown)
		} else {
			c.close(ErrShutdown)
		}
	}
}
