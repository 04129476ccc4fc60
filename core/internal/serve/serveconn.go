package serve

import (
	"net"
	"net/netip"

	"github.com/dwellhttp/dwell/core/internal/netpoll"
)

// Connections accepted elsewhere: an acceptor of the program's own, a socket passed by another
// process, or one end of an in-process socket pair (package coretest's Client, which serves a
// server with no listening socket at all: Serve(nil)). The connection is served as any other
// (Loop.open, then the transport and the poller); what differs is only the peer's address,
// which the caller may give, since a socket pair has none of its own.

// A ServedConn is a connection handed to a server with ServeConn.
type ServedConn struct {
	l      *Loop
	fd     int32
	serial uint32 // the Socket's: a descriptor reused by a later connection is not this one
}

// ServeConn hands c, a connection accepted elsewhere, to one of the server's loops, which
// serves it from then on as if the server's first listener had accepted it (with that
// listener's TLS, if it has some). The loop takes c's descriptor over: on Linux it keeps a
// duplicate and c is closed; elsewhere it reads and writes c itself. c must have a descriptor
// (a *net.TCPConn or *net.UnixConn, or a type embedding one). When c.RemoteAddr is a
// *net.TCPAddr, it is what Ctx.RemoteAddr and Conn.RemoteAddr return for the connection;
// otherwise they ask the socket.
//
// ServeConn waits for the server to start if it has not yet (Serve(nil) serves no listener but
// takes these), and for the loop to take the connection. Options.MaxConns does not apply. On an
// error — the server is shut down or shutting down, or c has no descriptor — c is closed.
func (s *Server) ServeConn(c net.Conn) (*ServedConn, error) {
	var remote netip.AddrPort
	if a, ok := c.RemoteAddr().(*net.TCPAddr); ok {
		ap := a.AddrPort()
		remote = netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port()) // as the socket's peer reads
	}
	fd, err := netpoll.ConnFD(c)
	if err != nil {
		return nil, err
	}
	loops, shutdown := s.startedLoops()
	if shutdown || len(loops) == 0 {
		netpoll.Close(fd)
		return nil, ErrServerClosed
	}
	l := loops[int(s.handed.Add(1)-1)%len(loops)]
	res := make(chan *ServedConn, 1)
	if l.Post(func() { res <- l.openGiven(fd, remote) }) != nil {
		netpoll.Close(fd)
		return nil, ErrServerClosed
	}
	if sc := <-res; sc != nil {
		return sc, nil
	}
	return nil, ErrServerClosed
}

// startedLoops waits until serve has made the loops of s (or failed to), or the server is
// shut down, and returns the loops (none when it never started) and whether it is shut down.
// It runs on the caller's goroutine (ServeConn), never on a loop.
func (s *Server) startedLoops() (loops []*Loop, shutdown bool) {
	<-s.Ready
	s.Mu.Lock()
	defer s.Mu.Unlock()
	return s.Loops, s.shutdown
}

// openGiven, on the loop, serves fd as a connection accepted from remote (the zero value: the
// socket's own peer), unless the loop is shutting down (then it closes fd, as the closed
// listener would refuse it).
func (l *Loop) openGiven(fd int, remote netip.AddrPort) *ServedConn {
	if l.Shutting {
		netpoll.Close(fd)
		return nil
	}
	if remote.IsValid() {
		if l.given == nil {
			l.given = make(map[int32]netip.AddrPort)
		}
		l.given[int32(fd)] = remote // before open, which may serve a request already
	}
	l.open(fd, 0)
	c := l.Conns[fd]
	if c == nil {
		delete(l.given, int32(fd))
		return nil // the poller refused it, and open closed it
	}
	return &ServedConn{l: l, fd: int32(fd), serial: c.Serial}
}

// givenRemote returns the peer address ServeConn was given for c, if any.
func (c *Socket) givenRemote() (netip.AddrPort, bool) {
	a, ok := c.Loop.given[c.FD]
	return a, ok
}

// Waiting reports, asking the connection's loop, whether the handler of the connection's
// request is parked in a wait of its own — Suspend or Hold (and so the waits of package wait),
// or a continuation pending after Detach — and which of its waits that is: a number that grows
// from one wait of the request to the next. over reports that the exchange is over: the
// connection is closed, or a request's handler has begun and is no longer running. A handler
// waiting for its request body or for room to write is not parked in this sense: what it
// waits for is its client. It is for test clients (package coretest), which wait for a
// handler to park before they do what wakes it.
func (sc *ServedConn) Waiting() (parked bool, wait uint32, over bool) {
	type state struct {
		parked bool
		wait   uint32
		over   bool
	}
	res := make(chan state, 1)
	if sc.l.Post(func() {
		var st state
		st.parked, st.wait, st.over = sc.state()
		res <- st
	}) != nil {
		return false, 0, true // the loop has stopped: the connection is closed
	}
	st := <-res
	return st.parked, st.wait, st.over
}

// state is Waiting's answer, on the loop. A request's waits are told apart by the count of
// those ended before (Ctx.gen, which each end of a Suspend, Hold or Detach advances).
func (sc *ServedConn) state() (parked bool, wait uint32, over bool) {
	c := sc.l.Conns[sc.fd]
	if c == nil || c.Serial != sc.serial || c.State == StClosed {
		return false, 0, true
	}
	switch {
	case c.State > StHandler: // after the request's handler
		return false, 0, true
	case c.State != StHandler: // waiting for a request: the first, or one after a request kept
		return false, 0, c.KeepAlive // the connection alive, which a request's head sets
	}
	switch cx := c.Ctx; cx.State {
	case ctxDetached:
		return true, cx.gen, false
	case ctxParked:
		return cx.park == parkUser || cx.park == parkHold, cx.gen, false
	}
	return false, 0, false // running, woken, or waiting for its body or to write
}
