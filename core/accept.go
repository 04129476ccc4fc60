package core

import (
	"net/netip"
	"time"

	"github.com/dwellhttp/dwell/core/internal/engine"
	"github.com/dwellhttp/dwell/core/internal/netpoll"
)

// acceptBatch bounds the connections taken per wake-up, so that a flood of new clients cannot
// starve the ones already connected.
const acceptBatch = 64

// acceptBackoff is how long the loop stops accepting after running out of file descriptors.
// The pending connections wait in the kernel backlog meanwhile; the server keeps serving.
const acceptBackoff = 100 * time.Millisecond

// listen registers the listening sockets. A socket shared between loops is registered with
// EPOLLEXCLUSIVE so that one new connection wakes one loop, not all.
func (l *Loop) listen() error {
	for i := range l.lns {
		ln := &l.lns[i]
		if ln.fd < 0 || ln.polled {
			continue
		}
		if err := l.poll.AddListener(ln.fd, ln.shared); err != nil {
			return err
		}
		ln.polled = true
	}
	return nil
}

// pauseAccept takes the listeners out of the poll set (EPOLLEXCLUSIVE forbids modifying them).
func (l *Loop) pauseAccept() {
	for i := range l.lns {
		if ln := &l.lns[i]; ln.polled {
			l.poll.Del(ln.fd)
			ln.polled = false
		}
	}
}

// acceptPaused reports whether a listener of the loop is open and out of the poll set.
func (l *Loop) acceptPaused() bool {
	for i := range l.lns {
		if ln := &l.lns[i]; ln.fd >= 0 && !ln.polled {
			return true
		}
	}
	return false
}

func (l *Loop) closeListener() {
	l.pauseAccept()
	for i := range l.lns {
		ln := &l.lns[i]
		if ln.fd < 0 {
			continue
		}
		if ln.shared {
			l.srv.leaveShared(i) // the last loop to stop accepting closes it
		} else {
			netpoll.Close(ln.fd)
		}
		ln.fd = -1
	}
}

// acceptRetry ends an accept backoff.
func (l *Loop) acceptRetry() {
	if !l.shutting && !l.atMaxConns() {
		l.listen()
	}
}

func (l *Loop) atMaxConns() bool { return l.opts.MaxConns > 0 && l.nconns >= l.opts.MaxConns }

// accept takes the connections waiting on listener i, up to acceptBatch.
func (l *Loop) accept(i int) {
	for range acceptBatch {
		if l.atMaxConns() {
			l.pauseAccept() // resumed by conn.close
			return
		}
		fd, e := netpoll.Accept(l.lns[i].fd)
		if e != 0 {
			switch e {
			case netpoll.EAGAIN, netpoll.EINTR, netpoll.ECONNABORTED:
				if e == netpoll.EAGAIN {
					return
				}
				continue
			case netpoll.EMFILE, netpoll.ENFILE, netpoll.ENOBUFS, netpoll.ENOMEM:
				// Out of descriptors or memory: stop accepting for a moment rather than spin on a
				// listener that stays readable, keep serving the connections we have, and say so
				// once per burst.
				if !l.acceptErr {
					l.log.Warn("dwell: accept failing; backing off", "loop", l.id, "err", netpoll.Error("accept4", e), "backoff", acceptBackoff)
					l.acceptErr = true
				}
				l.pauseAccept()
				l.accTimer.reset(acceptBackoff)
				return
			default:
				l.log.Error("dwell: accept failed", "loop", l.id, "err", netpoll.Error("accept4", e))
				return
			}
		}
		l.acceptErr = false
		l.open(fd, i)
	}
}

// open starts serving a socket accepted from listener ln. From a listener that defers
// accepting until the client has sent something (Options.DisableDeferAccept), the request is
// usually waiting: it is read, and often answered, at once, and the socket is registered with
// the poller only if the connection is still open after that — a Connection: close exchange
// never is.
func (l *Loop) open(fd, ln int) {
	if l.lns[ln].shared || !netpoll.AcceptInheritsNoDelay {
		// A listener passed to Serve is not ours to change, and connections may have queued on
		// it before Serve; those from our own listeners inherit the option (netpoll.Listen).
		netpoll.SetNoDelay(fd)
	}
	l.serial++
	if l.serial == 0 {
		l.serial = 1 // 0 marks the loop's own descriptors
	}
	c := &conn{carrier: carrier{serial: l.serial, l: l}, fd: int32(fd), events: netpoll.WatchRead | netpoll.WatchHangup,
		via: viaListener(ln, l.lns[ln].tls)}
	c.tm.Init(timerConn)
	for fd >= len(l.conns) {
		l.conns = engine.AppendDoubling(l.conns, nil)
	}
	l.conns[fd] = c
	l.nconns++
	if countStats {
		l.ctr.accepted++
	}
	c.setReadDeadline(l.opts.HeaderTimeout)
	if l.lns[ln].defers {
		c.readInput()
		if c.state == stClosed {
			return
		}
	}
	if err := l.poll.Add(fd, c.serial, c.events); err != nil {
		l.log.Error("dwell: cannot poll a new connection", "loop", l.id, "err", err)
		c.close(ErrClosed)
		return
	}
	c.polled = true
}

// remoteAddr returns the client's address, asked of the system when wanted: kept nowhere, since
// few requests ask and every connection would pay for it.
func (c *conn) remoteAddr() netip.AddrPort {
	if c.state == stClosed {
		return netip.AddrPort{}
	}
	if a, ok := c.givenRemote(); ok {
		return a
	}
	return netpoll.RemoteAddr(int(c.fd))
}
