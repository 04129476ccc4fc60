//go:build linux && !dwell_portable

package netpoll

import (
	"errors"
	"os"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// A Poller is one epoll instance, level-triggered: a socket that still has bytes is reported
// again, so the loop may stop reading any connection at any point (fairness, backpressure)
// without losing a wake-up. Or, made by NewRingPoller, one io_uring instance watching the same
// way (ringpoll_linux.go).
type Poller struct {
	fd     int // the epoll instance, or the io_uring one
	events []Event
	ring   *ringPoll // nil for epoll

	// The epoll instance is also in Go's runtime poller, which reports it readable when it has
	// events: a loop with nothing to do parks its goroutine there (see Wait).
	file     *os.File
	rc       syscall.RawConn
	deadline bool               // file has a read deadline set
	poll     func(uintptr) bool // p.tryWait, made once: rc.Read takes a func
	n        int                // what tryWait found
	e        unix.Errno
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

// NewPoller returns a poller that reports up to size events a wait.
func NewPoller(size int) (*Poller, error) {
	fd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, Error("epoll_create1", err.(unix.Errno))
	}
	// In non-blocking mode the epoll instance goes into Go's runtime poller (os.NewFile sees the
	// flag), which then reports it readable when it has events.
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		return nil, Error("fcntl", err.(unix.Errno))
	}
	return newPoller(fd, size, nil)
}

// NewRingPoller returns a poller on io_uring that reports up to size events a wait, or an error
// saying why io_uring cannot be used here (see newRing).
func NewRingPoller(size int) (*Poller, error) {
	rp, err := newRingPoll(uint32(max(2*size, 1024)))
	if err != nil {
		return nil, err
	}
	// Like an epoll instance, an io_uring one is readable while it has completions to read.
	if err := unix.SetNonblock(rp.r.fd, true); err != nil {
		rp.close()
		return nil, Error("fcntl", err.(unix.Errno))
	}
	return newPoller(rp.r.fd, size, rp)
}

// newPoller returns the Poller of fd, an epoll instance or rp's io_uring, in Go's runtime poller.
func newPoller(fd, size int, rp *ringPoll) (*Poller, error) {
	p := &Poller{fd: fd, events: make([]Event, size), ring: rp, file: os.NewFile(uintptr(fd), "poller")}
	var err error
	if p.rc, err = p.file.SyscallConn(); err != nil {
		p.Close()
		return nil, err
	}
	p.poll = p.tryWait
	return p, nil
}

// Add registers fd for in, with tag: a descriptor closed and reused within one batch of events
// must not receive the old socket's events, so the loop tags each registration with a serial
// number and checks it.
func (p *Poller) Add(fd int, tag uint32, in Interest) error {
	if p.ring != nil {
		return ringError("poll add", p.ring.add(fd, tag, fdEvents(in)))
	}
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
	if p.ring != nil {
		in := fdEvents(WatchRead)
		if shared {
			in |= evExclusive // a poll request takes EPOLLEXCLUSIVE too
		}
		return ringError("poll add", p.ring.add(fd, 0, in))
	}
	return p.ctl(unix.EPOLL_CTL_ADD, fd, 0, ev)
}

// Mod changes what fd is watched for.
func (p *Poller) Mod(fd int, tag uint32, in Interest) error {
	if p.ring != nil {
		return ringError("poll mod", p.ring.mod(fd, tag, fdEvents(in)))
	}
	return p.ctl(unix.EPOLL_CTL_MOD, fd, tag, epollEvents(in))
}

// Del stops watching fd, at once.
func (p *Poller) Del(fd int) {
	if p.ring != nil {
		p.ring.del(fd)
		p.ring.r.submit(0)
		return
	}
	p.ctl(unix.EPOLL_CTL_DEL, fd, 0, 0)
}

// Closing stops watching fd, which is about to be closed. epoll forgets a closed descriptor by
// itself; an io_uring request holds the socket open until it is removed, which the next Wait
// does (a receive or send under way is cancelled; bytes received and not read are dropped).
func (p *Poller) Closing(fd int) {
	if p.ring != nil {
		p.ring.del(fd)
	}
}

// Own has the poller read and write fd, a socket just registered (Add), itself, and reports
// whether it does: an io_uring poller does (ringio_linux.go), its receives and sends going to
// the kernel with the turn's one io_uring_enter; epoll never does. An owned socket's input goes
// through Read only, until it is closed; its output through Send and Sent, or, while no send is
// under way, the caller's own writes (a file's segments; TLS's handshake flights and closing
// alert).
func (p *Poller) Own(fd int) bool { return p.ring != nil && p.ring.own(fd) }

// Owns reports whether the poller owns fd (Own).
func (p *Poller) Owns(fd int) bool { return p.ring != nil && p.ring.owns(fd) }

// Read reads fd's bytes into b, as the package's Read: for a socket the poller owns, what its
// receives brought.
func (p *Poller) Read(fd int, b []byte) (int, Errno) {
	if p.ring != nil {
		return p.ring.read(fd, b)
	}
	return Read(fd, b)
}

// Send starts a send of the buffers gathered in iov to fd, a socket the poller owns with no
// send under way; more says more follows at once (MSG_MORE). The buffers are the kernel's to
// read until the send completes, which a later Wait reports as writability (when fd is watched
// for it), and Sent then returns what it sent. It fails with EINVAL for a socket the poller does
// not own.
func (p *Poller) Send(fd int, iov *IOVecs, more bool) Errno {
	if p.ring == nil {
		return unix.EINVAL
	}
	return p.ring.send(fd, iov, more)
}

// Sent returns, once, the result of fd's last send that completed: the bytes it sent (all it
// was given, unless the connection failed meanwhile), or its error; busy says a send is still
// under way.
func (p *Poller) Sent(fd int) (n int, err Errno, busy bool) {
	if p.ring == nil {
		return 0, 0, false
	}
	return p.ring.sentResult(fd)
}

// Sending returns the bytes of fd's send under way (0 for none): a connection closing with it
// must leave its buffers to the send, which holds them until the kernel is done.
func (p *Poller) Sending(fd int) int {
	if p.ring == nil {
		return 0
	}
	return p.ring.sending(fd)
}

// ringError turns an io_uring poller's errno into the error of call, as ctl's.
func ringError(call string, e Errno) error {
	if e != 0 {
		return Error(call, e)
	}
	return nil
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
// The events are taken with a non-blocking epoll_wait, through RawSyscall. When there are none
// the goroutine parks in Go's runtime poller until the epoll instance is readable (or msec has
// passed), as a goroutine of package net does on its socket: the runtime gives the processor to
// other goroutines meanwhile, counts the park as a reschedule (so it never preempts a loop for
// having "run" too long), and wakes the loop through its own netpoller. A blocking epoll_wait
// in a system call would instead hold the processor, or make the runtime hand it off and back,
// and keep sysmon busy retaking it.
func (p *Poller) Wait(msec int) ([]Event, error) {
	if msec == 0 {
		return p.result(p.rawWait(0))
	}
	switch {
	case msec > 0:
		p.file.SetReadDeadline(time.Now().Add(time.Duration(msec) * time.Millisecond))
		p.deadline = true
	case p.deadline:
		p.file.SetReadDeadline(time.Time{})
		p.deadline = false
	}
	if err := p.rc.Read(p.poll); err != nil {
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return nil, nil
		}
		return nil, err
	}
	return p.result(p.n, p.e)
}

// tryWait takes the ready events without waiting, and reports whether there were any (or an
// error): rc.Read calls it, and parks until the epoll instance is readable while it says no.
func (p *Poller) tryWait(uintptr) bool {
	p.n, p.e = p.rawWait(0)
	return p.n > 0 || p.e != 0 && p.e != unix.EINTR
}

func (p *Poller) result(n int, e unix.Errno) ([]Event, error) {
	switch e {
	case 0:
		return p.events[:n], nil
	case unix.EINTR:
		return nil, nil
	}
	if p.ring != nil {
		return nil, Error("io_uring_enter", e)
	}
	return nil, Error("epoll_wait", e)
}

// epoll_pwait with no signal mask is epoll_wait, and exists on every architecture (arm64 and
// riscv64 have no epoll_wait).

func (p *Poller) rawWait(msec int) (int, unix.Errno) {
	if p.ring != nil {
		return p.ring.wait(p.events) // msec is always 0: Wait parks in the runtime's poller
	}
	r, _, e := unix.RawSyscall6(unix.SYS_EPOLL_PWAIT, uintptr(p.fd), uintptr(unsafe.Pointer(&p.events[0])),
		uintptr(len(p.events)), uintptr(msec), 0, 0)
	return int(r), e
}

// Close releases the poller.
func (p *Poller) Close() {
	if p.ring != nil {
		p.ring.unmap() // the file's close closes the instance
	}
	p.file.Close()
}

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
