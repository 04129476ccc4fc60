package serve

import (
	"net/netip"

	"github.com/dwellhttp/dwell/core/internal/engine"
	"github.com/dwellhttp/dwell/core/internal/netpoll"
)

// acceptRetry ends an accept backoff.
func (l *Loop) acceptRetry() {
	if !l.Shutting && !l.atMaxConns() {
		l.Acc.Listen()
	}
}

// atMaxConns reports whether the loop holds Options.MaxConns connections: those open, and the
// handlers still under way for connections or streams that have closed (Linger).
func (l *Loop) atMaxConns() bool {
	return l.Opts.MaxConns > 0 && l.NConns+l.lingering >= l.Opts.MaxConns
}

// resumeAccept takes connections again, if the loop stopped for MaxConns and may go on.
func (l *Loop) resumeAccept() {
	if l.Acc.Paused() && !l.Shutting && !l.atMaxConns() && !l.accTimer.t.Armed() {
		l.Acc.Listen()
	}
}

// Linger counts a handler still under way for an exchange that has closed — a connection whose
// client left, a stream reset — until EndLinger: one that waits for work that runs to its end
// (Seam.Hold: wait.Do, the net/http bridge) is still the loop's to keep, so it counts against
// MaxConns as a connection does. Otherwise a client that closes and connects again, or resets
// a stream and opens another, could pile up such work past the bound.
func (l *Loop) Linger() { l.lingering++ }

// EndLinger: a handler counted by Linger has returned.
func (l *Loop) EndLinger() {
	l.lingering--
	l.resumeAccept()
}

// accept takes the connections waiting on listener i (engine.Acceptor.Accept), backing off
// for a moment when the process runs out of descriptors.
func (l *Loop) accept(i int) {
	if l.Acc.Accept(i, (*driver)(l)) {
		l.accTimer.reset(engine.AcceptBackoff)
	}
}

// open starts serving a socket accepted from listener ln. From a listener that defers
// accepting until the client has sent something (Options.DisableDeferAccept), the request is
// usually waiting: it is read, and often answered, at once, and the socket is registered with
// the poller only if the connection is still open after that — a Connection: close exchange
// never is.
func (l *Loop) open(fd, ln int) {
	lst := &l.Acc.Lns[ln]
	if lst.Shared || !netpoll.AcceptInheritsNoDelay {
		// A listener passed to Serve is not ours to change, and connections may have queued on
		// it before Serve; those from our own listeners inherit the option (netpoll.Listen).
		netpoll.SetNoDelay(fd)
	}
	l.Serial++
	if l.Serial == 0 {
		l.Serial = 1 // 0 marks the loop's own descriptors
	}
	c := &Socket{Carrier: Carrier{Serial: l.Serial, Loop: l}, Conn: engine.NewConn(fd, lst.TLS), Via: viaListener(ln, lst.TLS)}
	c.Timer.Init(timerConn)
	for fd >= len(l.Conns) {
		l.Conns = engine.AppendDoubling(l.Conns, nil)
	}
	l.Conns[fd] = c
	l.NConns++
	if CountStats {
		l.Ctr.accepted++
	}
	c.SetReadDeadline(l.Opts.HeaderTimeout)
	if lst.Defers {
		l.first.Input(c)
		if c.State == StClosed {
			return
		}
	}
	if err := c.Register(&l.Loop, c.Serial); err != nil {
		l.Log.Error("dwell: cannot poll a new connection", "loop", l.ID, "err", err)
		c.Close(ErrClosed)
	}
}

// RemoteAddr returns the client's address, asked of the system when wanted: kept nowhere, since
// few requests ask and every connection would pay for it.
func (c *Socket) RemoteAddr() netip.AddrPort {
	if c.State == StClosed {
		return netip.AddrPort{}
	}
	if a, ok := c.givenRemote(); ok {
		return a
	}
	return netpoll.RemoteAddr(int(c.FD))
}
