package engine

import (
	"log/slog"
	"time"

	"github.com/dwellhttp/dwell/core/internal/netpoll"
)

// acceptBatch bounds the connections taken per wake-up, so that a flood of new clients cannot
// starve the ones already connected.
const acceptBatch = 64

// AcceptBackoff is how long a loop stops accepting after running out of file descriptors (or
// memory). The pending connections wait in the kernel backlog meanwhile; the loop keeps serving
// the connections it has.
const AcceptBackoff = 100 * time.Millisecond

// A Listener is one of a loop's listening sockets.
type Listener struct {
	FD     int  // the listening socket; -1 once closed, or when the loop has none (ServeConn's)
	Shared bool // shared by the server's loops (EPOLLEXCLUSIVE): not the loop's to close or change
	Defers bool // hands over connections once they have sent something (TCP_DEFER_ACCEPT)
	TLS    bool // its connections speak TLS
	polled bool // registered with the poller
}

// An Acceptor takes the connections waiting on a loop's listening sockets, a batch a turn, and
// hands each to its loop (AcceptHost.Open); it stops accepting, the sockets out of the poll set,
// while its loop is full or out of descriptors. It knows no protocol: what a connection speaks
// is its loop's to find out.
type Acceptor struct {
	Lns []Listener

	poll    *netpoll.Poller
	log     *slog.Logger
	loop    int  // the loop's number, for the log
	failing bool // an accept failure was logged and not yet followed by a success
}

// An AcceptHost is the loop an Acceptor accepts for.
type AcceptHost interface {
	// Full reports whether the loop is at its limit of connections: accepting pauses until
	// the loop resumes it (Listen).
	Full() bool
	// Open starts serving fd, accepted from the listener Lns[ln].
	Open(fd, ln int)
}

// NewAcceptor returns the acceptor of loop number loop, which polls with poll and logs to log.
func NewAcceptor(lns []Listener, poll *netpoll.Poller, log *slog.Logger, loop int) Acceptor {
	return Acceptor{Lns: lns, poll: poll, log: log, loop: loop}
}

// Listen registers the open listening sockets not yet in the poll set. A socket shared between
// loops is registered with EPOLLEXCLUSIVE, so that one new connection wakes one loop, not all.
func (a *Acceptor) Listen() error {
	for i := range a.Lns {
		ln := &a.Lns[i]
		if ln.FD < 0 || ln.polled {
			continue
		}
		if err := a.poll.AddListener(ln.FD, ln.Shared); err != nil {
			return err
		}
		ln.polled = true
	}
	return nil
}

// Pause takes the listening sockets out of the poll set (EPOLLEXCLUSIVE forbids modifying them).
func (a *Acceptor) Pause() {
	for i := range a.Lns {
		if ln := &a.Lns[i]; ln.polled {
			a.poll.Del(ln.FD)
			ln.polled = false
		}
	}
}

// Paused reports whether a listening socket is open and out of the poll set.
func (a *Acceptor) Paused() bool {
	for i := range a.Lns {
		if ln := &a.Lns[i]; ln.FD >= 0 && !ln.polled {
			return true
		}
	}
	return false
}

// Close stops accepting for good: it closes the listening sockets the loop owns, and calls
// leave with the index of each shared one, whose last loop closes it.
func (a *Acceptor) Close(leave func(ln int)) {
	a.Pause()
	for i := range a.Lns {
		ln := &a.Lns[i]
		if ln.FD < 0 {
			continue
		}
		if ln.Shared {
			leave(i)
		} else {
			netpoll.CloseListener(ln.FD)
		}
		ln.FD = -1
	}
}

// drainMax bounds the connections Drain takes from one listening socket: more than a full
// accept queue (netpoll's backlog is 4,096), so that a flood arriving meanwhile cannot keep the
// loop accepting.
const drainMax = 8192

// Drain takes the connections already waiting on the listening sockets, as many as the loop
// has room for, and hands each to h: for a loop about to stop accepting (Close). Closing a
// listening socket resets the connections queued on it, whose clients may have sent their
// requests already and cannot tell whether they were served; taken, they are, and the shutdown
// closes them as it closes the others.
func (a *Acceptor) Drain(h AcceptHost) {
	for i := range a.Lns {
		if a.Lns[i].FD >= 0 {
			a.take(i, h, drainMax)
		}
	}
}

// ForgetShared forgets the shared listening sockets, without leaving them: for a loop that
// never ran, whose server closes them itself.
func (a *Acceptor) ForgetShared() {
	for i := range a.Lns {
		if a.Lns[i].Shared {
			a.Lns[i].FD = -1
		}
	}
}

// At returns the index of the listener whose socket is fd, or -1.
func (a *Acceptor) At(fd int) int {
	for i := range a.Lns {
		if a.Lns[i].FD == fd {
			return i
		}
	}
	return -1
}

// Accept takes the connections waiting on listener ln, up to acceptBatch, and hands each to h.
// It reports whether accepting is to back off for AcceptBackoff: the process or the system ran
// out of descriptors or memory, and rather than spin on a listener that stays readable, the
// listeners are out of the poll set until the loop puts them back (Listen). The failure is
// logged once a burst.
func (a *Acceptor) Accept(ln int, h AcceptHost) (backoff bool) {
	return a.take(ln, h, acceptBatch)
}

// take is Accept, up to max connections.
func (a *Acceptor) take(ln int, h AcceptHost, max int) (backoff bool) {
	for range max {
		if h.Full() {
			a.Pause()
			return false
		}
		fd, e := netpoll.Accept(a.Lns[ln].FD)
		switch e {
		case 0:
		case netpoll.EAGAIN:
			return false
		case netpoll.EINTR, netpoll.ECONNABORTED:
			continue
		case netpoll.EMFILE, netpoll.ENFILE, netpoll.ENOBUFS, netpoll.ENOMEM:
			if !a.failing {
				a.log.Warn("dwell: accept failing; backing off", "loop", a.loop, "err", netpoll.Error("accept4", e), "backoff", AcceptBackoff)
				a.failing = true
			}
			a.Pause()
			return true
		default:
			a.log.Error("dwell: accept failed", "loop", a.loop, "err", netpoll.Error("accept4", e))
			return false
		}
		a.failing = false
		h.Open(fd, ln)
	}
	return false
}
