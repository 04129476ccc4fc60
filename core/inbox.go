package core

import (
	"sync"

	"github.com/dwellhttp/dwell/core/internal/netpoll"
)

// A task is work posted to a loop from any goroutine: a function to run, or a wake-up for a
// parked handler (kept apart from f so that waking allocates nothing).
type task struct {
	f   func()
	w   Waker
	err error
}

// An inbox is how other goroutines reach a loop: a mutex-guarded queue drained by the loop
// (double-buffered: the loop swaps in an empty slice and runs the full one outside the lock),
// and a wake-up descriptor (an eventfd on Linux) signalled only when the queue goes from empty
// to non-empty. One signal costs about a microsecond; a burst of posts pays it once.
type inbox struct {
	mu     sync.Mutex
	queue  []task
	spare  []task
	closed bool
	wake   *netpoll.Wakeup
}

func newInbox() (*inbox, error) {
	w, err := netpoll.NewWakeup()
	if err != nil {
		return nil, err
	}
	return &inbox{wake: w}, nil
}

// post queues t and reports whether the loop will run it: false once the loop has stopped.
func (ib *inbox) post(t task) bool {
	ib.mu.Lock()
	if ib.closed {
		ib.mu.Unlock()
		return false
	}
	ib.queue = append(ib.queue, t)
	first := len(ib.queue) == 1
	ib.mu.Unlock()
	if first {
		ib.wake.Signal()
	}
	return true
}

// take clears the wake-up and returns the queued tasks; the caller hands the slice back with
// recycle once it has run them.
func (ib *inbox) take() []task {
	ib.wake.Clear()
	ib.mu.Lock()
	q := ib.queue
	ib.queue = ib.spare[:0]
	ib.spare = nil
	ib.mu.Unlock()
	return q
}

func (ib *inbox) recycle(q []task) {
	clear(q)
	ib.mu.Lock()
	ib.spare = q[:0]
	ib.mu.Unlock()
}

// close refuses later posts and returns what was queued but never run.
func (ib *inbox) close() []task {
	ib.mu.Lock()
	ib.closed = true
	q := ib.queue
	ib.queue = nil
	ib.mu.Unlock()
	ib.wake.Close()
	return q
}
