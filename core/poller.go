package core

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// A poller is one epoll instance, level-triggered: a socket that still has bytes is reported
// again, so the loop may stop reading any connection at any point (fairness, backpressure)
// without losing a wake-up.
type poller struct {
	fd     int
	events []unix.EpollEvent
}

// A connection's interest, in a byte: what it waits for. Every connection listens for hang-ups
// so that a parked handler learns at once that its client is gone; readability and writability
// come and go with what the connection is waiting for.
const (
	evRead   = 1 << iota // EPOLLIN
	evWrite              // EPOLLOUT
	evHangup             // EPOLLRDHUP
)

// epollEvents turns an interest into the poller's event mask.
func epollEvents(interest uint8) uint32 {
	var ev uint32
	if interest&evRead != 0 {
		ev |= unix.EPOLLIN
	}
	if interest&evWrite != 0 {
		ev |= unix.EPOLLOUT
	}
	if interest&evHangup != 0 {
		ev |= unix.EPOLLRDHUP
	}
	return ev
}

func newPoller(size int) (*poller, error) {
	fd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, errnoErr("epoll_create1", err.(unix.Errno))
	}
	return &poller{fd: fd, events: make([]unix.EpollEvent, size)}, nil
}

// Each registration carries the descriptor and a serial number: a descriptor closed and reused
// within one batch of events must not receive the old socket's events.
func (p *poller) add(fd int, serial uint32, events uint32) error {
	ev := unix.EpollEvent{Events: events, Fd: int32(fd), Pad: int32(serial)}
	if err := unix.EpollCtl(p.fd, unix.EPOLL_CTL_ADD, fd, &ev); err != nil {
		return errnoErr("epoll_ctl", err.(unix.Errno))
	}
	return nil
}

func (p *poller) mod(fd int, serial uint32, events uint32) error {
	ev := unix.EpollEvent{Events: events, Fd: int32(fd), Pad: int32(serial)}
	if err := unix.EpollCtl(p.fd, unix.EPOLL_CTL_MOD, fd, &ev); err != nil {
		return errnoErr("epoll_ctl", err.(unix.Errno))
	}
	return nil
}

func (p *poller) del(fd int) {
	unix.EpollCtl(p.fd, unix.EPOLL_CTL_DEL, fd, nil)
}

// wait returns the ready events. A zero timeout polls without blocking through RawSyscall: while
// the loop has work it never parks its thread, which keeps the runtime from handing its
// processor away and back for every request. A non-zero timeout (or -1) blocks through the
// ordinary syscall path so the processor is released while the loop sleeps.
func (p *poller) wait(msec int) ([]unix.EpollEvent, error) {
	var n int
	if msec == 0 {
		r, _, e := unix.RawSyscall6(unix.SYS_EPOLL_WAIT, uintptr(p.fd), uintptr(unsafe.Pointer(&p.events[0])),
			uintptr(len(p.events)), 0, 0, 0)
		if e != 0 {
			if e == unix.EINTR {
				return nil, nil
			}
			return nil, errnoErr("epoll_wait", e)
		}
		n = int(r)
	} else {
		var err error
		n, err = unix.EpollWait(p.fd, p.events, msec)
		if err != nil {
			if err == unix.EINTR {
				return nil, nil
			}
			return nil, errnoErr("epoll_wait", err.(unix.Errno))
		}
	}
	return p.events[:n], nil
}

func (p *poller) close() { unix.Close(p.fd) }
