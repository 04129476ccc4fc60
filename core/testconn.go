package core

import (
	"errors"
	"net/netip"
	"sync"
	"sync/atomic"

	"github.com/dwellhttp/dwell/core/internal/netpoll"
	"github.com/dwellhttp/dwell/internal/ctxhook"
)

// In-process connections, for package coretest's Client (internal/ctxhook/conn.go): a server
// served with no listening socket, whose loops take connected sockets handed to them as if
// accepted — one end of a pair whose other end is the test's client. The connection is served
// as any other (Loop.open, then the transport and the poller); what differs is only what a
// listener would have given: the peer's address, which a socket pair does not have (its
// getpeername is AF_UNIX's), and which the test chooses instead. The server's handler is
// wrapped to give each request its connection's address (Ctx.RemoteAddr); the log lines and a
// handed-over Conn, which ask the socket, see the socket's (none, for a socket pair).

// An inProcess is what a server served by serveConns keeps for its connections.
type inProcess struct {
	next  atomic.Uint32              // the loop the next connection goes to, in turn
	conns []map[int32]*inProcessConn // by loop, then descriptor: each loop's own, touched on it alone
}

// An inProcessConn is one connection handed to a loop (ctxhook.ServeConn's result).
type inProcessConn struct {
	l       *Loop
	fd      int32
	serial  uint32         // the conn's: a descriptor reused by a later connection is not this one
	remote  netip.AddrPort // what Ctx.RemoteAddr returns for its requests
	started bool           // a handler has begun on it (set on the loop)
}

// errNotInProcess refuses a connection for a server that is not served by serveConns.
var errNotInProcess = errors.New("dwell: the server does not serve in-process connections")

// inProcessServers holds the inProcess of each server served by serveConns, while it serves.
var inProcessServers sync.Map // *Server → *inProcess

func init() {
	ctxhook.ServeConns = func(s any) error { return s.(*Server).serveConns() }
	ctxhook.ServeConn = func(s any, fd int, remote netip.AddrPort) (any, error) {
		return s.(*Server).serveConn(fd, remote)
	}
	ctxhook.ConnParked = func(c any) (bool, uint32, bool) { return c.(*inProcessConn).parked() }
}

// serveConns serves s with Options.Loops loops and no listener, until Shutdown.
func (s *Server) serveConns() error {
	s.mu.Lock()
	n := s.opts.Loops
	ip := &inProcess{conns: make([]map[int32]*inProcessConn, n)}
	for i := range ip.conns {
		ip.conns[i] = make(map[int32]*inProcessConn)
	}
	if !s.started && !s.shutdown {
		if _, loaded := inProcessServers.LoadOrStore(s, ip); loaded {
			s.mu.Unlock()
			return errors.New("dwell: server already serving")
		}
		defer inProcessServers.Delete(s)
		h := s.handler
		s.handler = func(cx *Ctx) {
			if c := ip.conns[cx.l.id][cx.conn.fd]; c != nil && c.serial == cx.conn.serial {
				c.started = true
				cx.rare().remote = c.remote
			}
			h(cx)
		}
	}
	s.mu.Unlock()
	// No listening socket: a listener that Listen did not open gives each loop none (-1),
	// which listen and closeListener skip.
	return s.serve() // refuses a server started or shut down already
}

// serveConn hands the connected socket fd to a loop of s (see ctxhook.ServeConn).
func (s *Server) serveConn(fd int, remote netip.AddrPort) (any, error) {
	loops, shutdown := s.startedLoops()
	v, _ := inProcessServers.Load(s)
	ip, _ := v.(*inProcess)
	switch {
	case shutdown || len(loops) == 0:
		netpoll.Close(fd)
		return nil, ErrServerClosed
	case ip == nil: // serving a listener
		netpoll.Close(fd)
		return nil, errNotInProcess
	}
	l := loops[int(ip.next.Add(1)-1)%len(loops)]
	res := make(chan *inProcessConn, 1)
	if l.Post(func() { res <- l.openInProcess(ip, fd, remote) }) != nil {
		netpoll.Close(fd)
		return nil, ErrServerClosed
	}
	if c := <-res; c != nil {
		return c, nil
	}
	return nil, ErrServerClosed
}

// startedLoops waits until serve has made the loops of s (or failed to), or the server is
// shut down, and returns the loops (none when it never started) and whether it is shut down.
// It runs on the test's goroutine (ServeConn), never on a loop.
func (s *Server) startedLoops() (loops []*Loop, shutdown bool) {
	<-s.ready
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.loops, s.shutdown
}

// openInProcess, on the loop, serves fd as a connection accepted from remote, unless the loop
// is shutting down (then it closes fd, as the closed listener would refuse it).
func (l *Loop) openInProcess(ip *inProcess, fd int, remote netip.AddrPort) *inProcessConn {
	if l.shutting {
		netpoll.Close(fd)
		return nil
	}
	l.open(fd, 0)
	c := l.conns[fd]
	if c == nil {
		return nil // the poller refused it, and open closed it
	}
	ic := &inProcessConn{l: l, fd: int32(fd), serial: c.serial, remote: remote}
	ip.conns[l.id][int32(fd)] = ic
	return ic
}

// parked asks the loop what the connection's handler is doing (see ctxhook.ConnParked).
func (ic *inProcessConn) parked() (parked bool, wait uint32, over bool) {
	type state struct {
		parked bool
		wait   uint32
		over   bool
	}
	res := make(chan state, 1)
	if ic.l.Post(func() {
		var st state
		st.parked, st.wait, st.over = ic.state()
		res <- st
	}) != nil {
		return false, 0, true // the loop has stopped: the connection is closed
	}
	st := <-res
	return st.parked, st.wait, st.over
}

// state is parked's answer, on the loop. A request's waits are told apart by the count of
// those ended before (Ctx.gen, which each end of a Suspend, Hold or Detach advances).
func (ic *inProcessConn) state() (parked bool, wait uint32, over bool) {
	c := ic.l.conns[ic.fd]
	if c == nil || c.serial != ic.serial || c.state == stClosed {
		return false, 0, true
	}
	if c.state != stHandler {
		return false, 0, ic.started // before the request's handler, or after it
	}
	switch cx := c.cx; cx.state {
	case ctxDetached:
		return true, cx.gen, false
	case ctxParked:
		return cx.park == parkUser || cx.park == parkHold, cx.gen, false
	}
	return false, 0, false // running, woken, or waiting for its body or to write
}
