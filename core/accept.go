package core

import (
	"net/netip"
	"time"

	"github.com/dwellhttp/dwell/core/internal/netpoll"
)

// acceptBatch bounds the connections taken per wake-up, so that a flood of new clients cannot
// starve the ones already connected.
const acceptBatch = 64

// acceptBackoff is how long the loop stops accepting after running out of file descriptors.
// The pending connections wait in the kernel backlog meanwhile; the server keeps serving.
const acceptBackoff = 100 * time.Millisecond

// listen registers the listening socket. A socket shared between loops is registered with
// EPOLLEXCLUSIVE so that one new connection wakes one loop, not all.
func (l *Loop) listen() error {
	if l.lfd < 0 || l.listening {
		return nil
	}
	if err := l.poll.AddListener(l.lfd, l.lfdShared); err != nil {
		return err
	}
	l.listening = true
	return nil
}

// pauseAccept takes the listener out of the poll set (EPOLLEXCLUSIVE forbids modifying it).
func (l *Loop) pauseAccept() {
	if l.listening {
		l.poll.Del(l.lfd)
		l.listening = false
	}
}

func (l *Loop) closeListener() {
	if l.lfd < 0 {
		return
	}
	l.pauseAccept()
	if l.lfdShared {
		l.srv.leaveShared() // the last loop to stop accepting closes it
	} else {
		netpoll.Close(l.lfd)
	}
	l.lfd = -1
}

// acceptRetry ends an accept backoff.
func (l *Loop) acceptRetry() {
	if !l.shutting && !l.atMaxConns() {
		l.listen()
	}
}

func (l *Loop) atMaxConns() bool { return l.opts.MaxConns > 0 && l.nconns >= l.opts.MaxConns }

// accept takes the waiting connections, up to acceptBatch.
func (l *Loop) accept() {
	for range acceptBatch {
		if l.atMaxConns() {
			l.pauseAccept() // resumed by conn.close
			return
		}
		fd, e := netpoll.Accept(l.lfd)
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
		l.open(fd)
	}
}

// open starts serving an accepted socket. From a listener that defers accepting until the
// client has sent something (Options.DisableDeferAccept), the request is usually waiting: it
// is read, and often answered, at once, and the socket is registered with the poller only if
// the connection is still open after that — a Connection: close exchange never is.
func (l *Loop) open(fd int) {
	if l.lfdShared || !netpoll.AcceptInheritsNoDelay {
		// A listener passed to Serve is not ours to change, and connections may have queued on
		// it before Serve; those from our own listeners inherit the option (netpoll.Listen).
		netpoll.SetNoDelay(fd)
	}
	l.serial++
	if l.serial == 0 {
		l.serial = 1 // 0 marks the loop's own descriptors
	}
	c := &conn{fd: int32(fd), serial: l.serial, l: l, events: netpoll.WatchRead | netpoll.WatchHangup}
	c.tm.init(timerConn)
	for fd >= len(l.conns) {
		l.conns = appendDoubling(l.conns, nil)
	}
	l.conns[fd] = c
	l.nconns++
	if countStats {
		l.ctr.accepted++
	}
	c.setReadDeadline(l.opts.HeaderTimeout)
	if l.lfdDefers {
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
	return netpoll.RemoteAddr(int(c.fd))
}
