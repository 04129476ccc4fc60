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
	raw    bool // waits may hold the processor for their first millisecond (see wait)
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
	return p.ctl(unix.EPOLL_CTL_ADD, fd, serial, events)
}

func (p *poller) mod(fd int, serial uint32, events uint32) error {
	return p.ctl(unix.EPOLL_CTL_MOD, fd, serial, events)
}

func (p *poller) del(fd int) {
	p.ctl(unix.EPOLL_CTL_DEL, fd, 0, 0)
}

// ctl never blocks, so it goes through RawSyscall, as reads and writes do (see sys.go).
func (p *poller) ctl(op, fd int, serial uint32, events uint32) error {
	ev := unix.EpollEvent{Events: events, Fd: int32(fd), Pad: int32(serial)}
	_, _, e := unix.RawSyscall6(unix.SYS_EPOLL_CTL, uintptr(p.fd), uintptr(op), uintptr(fd), uintptr(unsafe.Pointer(&ev)), 0, 0)
	if e != 0 {
		return errnoErr("epoll_ctl", e)
	}
	return nil
}

// wait returns the ready events, waiting up to msec milliseconds (-1: until there are some).
//
// When raw is set, a wait goes through RawSyscall for its first millisecond, and through the
// ordinary syscall path only after that. The ordinary path lets the runtime hand the loop's
// processor to another thread once the call has lasted 20 µs, and under load the loop's idle
// gaps are about that long: each hand-off and return cost more (futex and netpoll calls,
// context switches) than the gap itself. A raw wait keeps the processor; it is short enough
// that the runtime's scheduler never needs it back (it preempts after 10 ms). It is set only
// when GOMAXPROCS leaves a processor to spare beside the loops, so that other goroutines (wait.Do
// workers, publishers) never wait for a loop's raw millisecond. A loop idle for longer blocks
// the ordinary way and gives its processor up.
func (p *poller) wait(msec int) ([]unix.EpollEvent, error) {
	if !p.raw && msec != 0 {
		n, err := unix.EpollWait(p.fd, p.events, msec)
		if err != nil {
			if err == unix.EINTR {
				return nil, nil
			}
			return nil, errnoErr("epoll_wait", err.(unix.Errno))
		}
		return p.events[:n], nil
	}
	first := msec
	if msec < 0 || msec > rawWaitMsec {
		first = rawWaitMsec
	}
	n, e := p.rawWait(first)
	if n == 0 && e == 0 && first != msec {
		rest := -1
		if msec > 0 {
			rest = msec - rawWaitMsec
		}
		var err error
		if n, err = unix.EpollWait(p.fd, p.events, rest); err != nil {
			e = err.(unix.Errno)
		}
	}
	switch e {
	case 0:
		return p.events[:n], nil
	case unix.EINTR:
		return nil, nil
	}
	return nil, errnoErr("epoll_wait", e)
}

// rawWaitMsec is how long a wait may last without releasing the loop's processor.
const rawWaitMsec = 1

func (p *poller) rawWait(msec int) (int, unix.Errno) {
	r, _, e := unix.RawSyscall6(unix.SYS_EPOLL_WAIT, uintptr(p.fd), uintptr(unsafe.Pointer(&p.events[0])),
		uintptr(len(p.events)), uintptr(msec), 0, 0)
	return int(r), e
}

func (p *poller) close() { unix.Close(p.fd) }
