//go:build !linux || dwell_portable

package netpoll

import (
	"errors"
	"sync"
	"time"
)

// A Poller watches descriptors of this package's table, level-triggered: Wait reports every
// watched descriptor that is ready now, from its state, and blocks only when none is.
type Poller struct {
	mu      sync.Mutex
	watched map[int]*sock
	wake    chan struct{} // one token: something changed since the last look
	events  []Event
}

// An Event is a descriptor's readiness, as Wait reports it.
type Event struct {
	fd  int
	tag uint32
	ev  evFlags
}

type evFlags uint8

const (
	evReadable evFlags = 1 << iota
	evWritable
	evPeerClosed
	evFailed
)

// FD returns the descriptor the event is for.
func (e *Event) FD() int { return e.fd }

// Tag returns the tag the descriptor was registered with (Add, Mod).
func (e *Event) Tag() uint32 { return e.tag }

// Failed reports that the connection failed: reset, or its writes failed.
func (e *Event) Failed() bool { return e.ev&evFailed != 0 }

// Writable reports room to write.
func (e *Event) Writable() bool { return e.ev&evWritable != 0 }

// Readable reports bytes to read, or the peer's end of input.
func (e *Event) Readable() bool { return e.ev&(evReadable|evPeerClosed) != 0 }

// PeerClosed reports that the peer shut down its side: no more bytes will come.
func (e *Event) PeerClosed() bool { return e.ev&evPeerClosed != 0 }

// NewPoller returns a poller that reports up to size events a wait.
func NewPoller(size int) (*Poller, error) {
	return &Poller{watched: map[int]*sock{}, wake: make(chan struct{}, 1), events: make([]Event, 0, size)}, nil
}

// kick marks that something changed, from any goroutine.
func (p *Poller) kick() {
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// Add registers fd for in, with tag.
func (p *Poller) Add(fd int, tag uint32, in Interest) error {
	s := lookup(fd)
	if s == nil {
		return Error("poll add", EBADF)
	}
	s.mu.Lock()
	s.p, s.tag, s.interest = p, tag, in
	s.mu.Unlock()
	p.mu.Lock()
	p.watched[fd] = s
	p.mu.Unlock()
	p.kick()
	return nil
}

// AddListener registers a listening socket for readability; shared listeners need nothing
// special here: each new connection is taken by one Accept.
func (p *Poller) AddListener(fd int, shared bool) error { return p.Add(fd, 0, WatchRead) }

// Mod changes what fd is watched for.
func (p *Poller) Mod(fd int, tag uint32, in Interest) error {
	p.mu.Lock()
	s := p.watched[fd]
	p.mu.Unlock()
	if s == nil {
		return Error("poll mod", EBADF)
	}
	s.mu.Lock()
	s.tag, s.interest = tag, in
	s.mu.Unlock()
	p.kick()
	return nil
}

// Del stops watching fd.
func (p *Poller) Del(fd int) {
	p.mu.Lock()
	s := p.watched[fd]
	delete(p.watched, fd)
	p.mu.Unlock()
	if s != nil {
		s.mu.Lock()
		if s.p == p {
			s.p = nil
		}
		s.mu.Unlock()
	}
}

// Wait returns the ready events, waiting up to msec milliseconds (-1: until there are some;
// 0: not at all).
func (p *Poller) Wait(msec int) ([]Event, error) {
	var timeout <-chan time.Time
	for {
		if evs := p.ready(); len(evs) > 0 || msec == 0 {
			return evs, nil
		}
		if timeout == nil && msec > 0 {
			t := time.NewTimer(time.Duration(msec) * time.Millisecond)
			defer t.Stop()
			timeout = t.C
		}
		select {
		case <-p.wake:
		case <-timeout:
			return p.ready(), nil
		}
	}
}

// ready collects the events of the watched descriptors, up to the poller's size.
func (p *Poller) ready() []Event {
	select { // the look below sees every change made before this point
	case <-p.wake:
	default:
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	evs := p.events[:0]
	for fd, s := range p.watched {
		if len(evs) == cap(evs) {
			p.kick() // more are ready: the next Wait returns at once
			break
		}
		s.mu.Lock()
		ev, tag := s.readiness(s.interest), s.tag
		s.mu.Unlock()
		if ev != 0 {
			evs = append(evs, Event{fd: fd, tag: tag, ev: ev})
		}
	}
	p.events = evs
	return evs
}

// Close stops watching everything.
func (p *Poller) Close() {
	p.mu.Lock()
	fds := make([]int, 0, len(p.watched))
	for fd := range p.watched {
		fds = append(fds, fd)
	}
	p.mu.Unlock()
	for _, fd := range fds {
		p.Del(fd)
	}
}

// A Wakeup is a descriptor other goroutines make readable to wake a loop.
type Wakeup struct{ s *sock }

// NewWakeup returns a Wakeup; register its FD with the loop's poller for WatchRead.
func NewWakeup() (*Wakeup, error) {
	s := newSock(kindWakeup)
	register(s)
	return &Wakeup{s: s}, nil
}

// FD returns the descriptor to poll.
func (w *Wakeup) FD() int { return w.s.fd }

// Signal makes the descriptor readable. It may be called from any goroutine.
func (w *Wakeup) Signal() {
	w.s.mu.Lock()
	w.s.signalled = true
	w.s.changed()
	w.s.mu.Unlock()
}

// Clear makes the descriptor unreadable again.
func (w *Wakeup) Clear() {
	w.s.mu.Lock()
	w.s.signalled = false
	w.s.mu.Unlock()
}

// Close releases the descriptor.
func (w *Wakeup) Close() { unregister(w.s.fd) }

// Closing stops watching fd, which is about to be closed: Close does that here.
func (p *Poller) Closing(int) {}

// NewRingPoller fails: io_uring is Linux's own, and this build is the portable one.
func NewRingPoller(int) (*Poller, error) {
	return nil, errors.New("io_uring: not in this build (the portable poller)")
}

// Own reports false: the portable poller never reads or writes a socket itself (see the Linux
// build's Poller.Own).
func (p *Poller) Own(int) bool { return false }

// Owns reports false: the portable poller owns no socket.
func (p *Poller) Owns(int) bool { return false }

// Read reads fd's bytes into b, as the package's Read.
func (p *Poller) Read(fd int, b []byte) (int, Errno) { return Read(fd, b) }

// Send fails: the poller owns no socket.
func (p *Poller) Send(int, *IOVecs, bool) Errno { return EIO }

// Sent reports no send: the poller owns no socket.
func (p *Poller) Sent(int) (int, Errno, bool) { return 0, 0, false }

// Sending reports no send under way: the poller owns no socket.
func (p *Poller) Sending(int) int { return 0 }
