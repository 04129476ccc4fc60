//go:build linux && !dwell_portable

package netpoll

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// A Poller is one epoll instance, level-triggered: a socket that still has bytes is reported
// again, so the loop may stop reading any connection at any point (fairness, backpressure)
// without losing a wake-up.
type Poller struct {
	fd     int
	events []Event
	raw    bool // waits may hold the processor for their first millisecond (see Wait)
}

// An Event is a descriptor's readiness, as Wait reports it.
type Event unix.EpollEvent

// FD returns the descriptor the event is for.
func (e *Event) FD() int { return int(e.Fd) }

// Tag returns the tag the descriptor was registered with (Add, Mod).
func (e *Event) Tag() uint32 { return uint32(e.Pad) }

// Failed reports that both directions are shut: the peer reset the connection, or it finished
// closing it.
func (e *Event) Failed() bool { return e.Events&(unix.EPOLLERR|unix.EPOLLHUP) != 0 }

// Writable reports room to write.
func (e *Event) Writable() bool { return e.Events&unix.EPOLLOUT != 0 }

// Readable reports bytes to read, or the peer's end of input.
func (e *Event) Readable() bool { return e.Events&(unix.EPOLLIN|unix.EPOLLRDHUP) != 0 }

// PeerClosed reports that the peer shut down its side: no more bytes will come.
func (e *Event) PeerClosed() bool { return e.Events&unix.EPOLLRDHUP != 0 }

// epollEvents turns an interest into epoll's event mask.
func epollEvents(in Interest) uint32 {
	var ev uint32
	if in&WatchRead != 0 {
		ev |= unix.EPOLLIN
	}
	if in&WatchWrite != 0 {
		ev |= unix.EPOLLOUT
	}
	if in&WatchHangup != 0 {
		ev |= unix.EPOLLRDHUP
	}
	return ev
}

// NewPoller returns a poller that reports up to size events a wait. raw allows its waits to
// keep the calling goroutine's processor for their first millisecond (see Wait): set it only
// when the program has a processor to spare beside the loops.
func NewPoller(size int, raw bool) (*Poller, error) {
	fd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, Error("epoll_create1", err.(unix.Errno))
	}
	return &Poller{fd: fd, events: make([]Event, size), raw: raw}, nil
}

// Add registers fd for in, with tag: a descriptor closed and reused within one batch of events
// must not receive the old socket's events, so the loop tags each registration with a serial
// number and checks it.
func (p *Poller) Add(fd int, tag uint32, in Interest) error {
	return p.ctl(unix.EPOLL_CTL_ADD, fd, tag, epollEvents(in))
}

// AddListener registers a listening socket for readability. A socket shared between loops is
// registered with EPOLLEXCLUSIVE, so that one new connection wakes one loop, not all; such a
// registration cannot be modified, only deleted.
func (p *Poller) AddListener(fd int, shared bool) error {
	ev := uint32(unix.EPOLLIN)
	if shared {
		ev |= unix.EPOLLEXCLUSIVE
	}
	return p.ctl(unix.EPOLL_CTL_ADD, fd, 0, ev)
}

// Mod changes what fd is watched for.
func (p *Poller) Mod(fd int, tag uint32, in Interest) error {
	return p.ctl(unix.EPOLL_CTL_MOD, fd, tag, epollEvents(in))
}

// Del stops watching fd.
func (p *Poller) Del(fd int) {
	p.ctl(unix.EPOLL_CTL_DEL, fd, 0, 0)
}

// ctl never blocks, so it goes through RawSyscall, as reads and writes do (see sys_linux.go).
func (p *Poller) ctl(op, fd int, tag uint32, events uint32) error {
	ev := unix.EpollEvent{Events: events, Fd: int32(fd), Pad: int32(tag)}
	_, _, e := unix.RawSyscall6(unix.SYS_EPOLL_CTL, uintptr(p.fd), uintptr(op), uintptr(fd), uintptr(unsafe.Pointer(&ev)), 0, 0)
	if e != 0 {
		return Error("epoll_ctl", e)
	}
	return nil
}

// Wait returns the ready events, waiting up to msec milliseconds (-1: until there are some;
// 0: not at all). A signal interrupting the wait returns no events and no error.
//
// When raw is set, a wait goes through RawSyscall for its first millisecond, and through the
// ordinary syscall path only after that. The ordinary path lets the runtime hand the loop's
// processor to another thread once the call has lasted 20 µs, and under load the loop's idle
// gaps are about that long: each hand-off and return cost more (futex and netpoll calls,
// context switches) than the gap itself. A raw wait keeps the processor; it is short enough
// that the runtime's scheduler never needs it back (it preempts after 10 ms). A loop idle for
// longer blocks the ordinary way and gives its processor up.
func (p *Poller) Wait(msec int) ([]Event, error) {
	if !p.raw && msec != 0 {
		return p.result(p.wait(msec))
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
		n, e = p.wait(rest)
	}
	return p.result(n, e)
}

func (p *Poller) result(n int, e unix.Errno) ([]Event, error) {
	switch e {
	case 0:
		return p.events[:n], nil
	case unix.EINTR:
		return nil, nil
	}
	return nil, Error("epoll_wait", e)
}

// epoll_pwait with no signal mask is epoll_wait, and exists on every architecture (arm64 and
// riscv64 have no epoll_wait).

// rawWaitMsec is how long a wait may last without releasing the loop's processor.
const rawWaitMsec = 1

func (p *Poller) rawWait(msec int) (int, unix.Errno) {
	r, _, e := unix.RawSyscall6(unix.SYS_EPOLL_PWAIT, uintptr(p.fd), uintptr(unsafe.Pointer(&p.events[0])),
		uintptr(len(p.events)), uintptr(msec), 0, 0)
	return int(r), e
}

func (p *Poller) wait(msec int) (int, unix.Errno) {
	r, _, e := unix.Syscall6(unix.SYS_EPOLL_PWAIT, uintptr(p.fd), uintptr(unsafe.Pointer(&p.events[0])),
		uintptr(len(p.events)), uintptr(msec), 0, 0)
	return int(r), e
}

// Close releases the epoll instance.
func (p *Poller) Close() { unix.Close(p.fd) }

// A Wakeup is a descriptor other goroutines make readable to wake a loop: an eventfd.
type Wakeup struct{ fd int }

// eventfdOne is the 8-byte counter increment written to the eventfd (little-endian 1).
var eventfdOne = [8]byte{1}

// NewWakeup returns a Wakeup; register its FD with the loop's poller for WatchRead.
func NewWakeup() (*Wakeup, error) {
	fd, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
	if err != nil {
		return nil, Error("eventfd", err.(unix.Errno))
	}
	return &Wakeup{fd: fd}, nil
}

// FD returns the descriptor to poll.
func (w *Wakeup) FD() int { return w.fd }

// Signal makes the descriptor readable. It may be called from any goroutine.
func (w *Wakeup) Signal() {
	unix.RawSyscall(unix.SYS_WRITE, uintptr(w.fd), uintptr(unsafe.Pointer(&eventfdOne)), 8)
}

// Clear makes the descriptor unreadable again.
func (w *Wakeup) Clear() {
	var buf [8]byte
	unix.RawSyscall(unix.SYS_READ, uintptr(w.fd), uintptr(unsafe.Pointer(&buf)), 8)
}

// Close releases the descriptor.
func (w *Wakeup) Close() { unix.Close(w.fd) }
