package core

import (
	"net/netip"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
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
	ev := uint32(unix.EPOLLIN)
	if l.lfdShared {
		ev |= unix.EPOLLEXCLUSIVE
	}
	if err := l.poll.add(l.lfd, 0, ev); err != nil {
		return err
	}
	l.listening = true
	return nil
}

// pauseAccept takes the listener out of the poll set (EPOLLEXCLUSIVE forbids modifying it).
func (l *Loop) pauseAccept() {
	if l.listening {
		l.poll.del(l.lfd)
		l.listening = false
	}
}

func (l *Loop) closeListener() {
	if l.lfd < 0 {
		return
	}
	l.pauseAccept()
	if !l.lfdShared {
		unix.Close(l.lfd)
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
		fd, e := sysAccept(l.lfd)
		if e != 0 {
			switch e {
			case unix.EAGAIN, unix.EINTR, unix.ECONNABORTED:
				if e == unix.EAGAIN {
					return
				}
				continue
			case unix.EMFILE, unix.ENFILE, unix.ENOBUFS, unix.ENOMEM:
				// Out of descriptors or memory: stop accepting for a moment rather than spin on a
				// listener that stays readable, keep serving the connections we have, and say so
				// once per burst.
				if !l.acceptErr {
					l.log.Warn("dwell: accept failing; backing off", "loop", l.id, "err", errnoErr("accept4", e), "backoff", acceptBackoff)
					l.acceptErr = true
				}
				l.pauseAccept()
				l.accTimer.Reset(acceptBackoff)
				return
			default:
				l.log.Error("dwell: accept failed", "loop", l.id, "err", errnoErr("accept4", e))
				return
			}
		}
		l.acceptErr = false
		l.open(fd)
	}
}

// open starts serving an accepted socket.
func (l *Loop) open(fd int) {
	if l.lfdShared {
		// A listener passed to Serve is not ours to change, and connections may have queued on
		// it before Serve; those from our own listeners inherit the option (see listenTCP).
		setNoDelay(fd)
	}
	l.serial++
	if l.serial == 0 {
		l.serial = 1 // 0 marks the loop's own descriptors
	}
	c := &conn{fd: int32(fd), serial: l.serial, l: l, events: evRead | evHangup}
	c.tm.init(timerConn)
	if err := l.poll.add(fd, c.serial, epollEvents(c.events)); err != nil {
		unix.Close(fd)
		l.log.Error("dwell: cannot poll a new connection", "loop", l.id, "err", err)
		return
	}
	for fd >= len(l.conns) {
		l.conns = appendDoubling(l.conns, nil)
	}
	l.conns[fd] = c
	l.nconns++
	c.setReadDeadline(l.opts.HeaderTimeout)
}

// remoteAddr asks the kernel for the client's address: kept nowhere, since few requests ask and
// every connection would pay for it.
func (c *conn) remoteAddr() netip.AddrPort {
	if c.state == stClosed {
		return netip.AddrPort{}
	}
	var rsa unix.RawSockaddrAny
	n := uint32(unix.SizeofSockaddrAny)
	_, _, e := unix.RawSyscall(unix.SYS_GETPEERNAME, uintptr(c.fd), uintptr(unsafe.Pointer(&rsa)), uintptr(unsafe.Pointer(&n)))
	if e != 0 {
		return netip.AddrPort{}
	}
	return sockaddrAddrPort(&rsa)
}

// sockaddrAddrPort converts a socket address without allocating.
func sockaddrAddrPort(rsa *unix.RawSockaddrAny) netip.AddrPort {
	switch rsa.Addr.Family {
	case unix.AF_INET:
		sa := (*unix.RawSockaddrInet4)(unsafe.Pointer(rsa))
		p := (*[2]byte)(unsafe.Pointer(&sa.Port))
		return netip.AddrPortFrom(netip.AddrFrom4(sa.Addr), uint16(p[0])<<8|uint16(p[1]))
	case unix.AF_INET6:
		sa := (*unix.RawSockaddrInet6)(unsafe.Pointer(rsa))
		p := (*[2]byte)(unsafe.Pointer(&sa.Port))
		return netip.AddrPortFrom(netip.AddrFrom16(sa.Addr).Unmap(), uint16(p[0])<<8|uint16(p[1]))
	}
	return netip.AddrPort{}
}
