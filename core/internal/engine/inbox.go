package engine

import (
	"sync"

	"github.com/dwellhttp/dwell/core/internal/netpoll"
)

// An Inbox is how other goroutines reach a loop: a mutex-guarded queue drained by the loop
// (double-buffered: the loop swaps in an empty slice and runs the full one outside the lock),
// and a wake-up descriptor (an eventfd on Linux) signalled only when the queue goes from empty
// to non-empty. One signal costs about a microsecond; a burst of posts pays it once.
type Inbox[T any] struct {
	mu     sync.Mutex
	queue  []T
	spare  []T
	closed bool
	wake   *netpoll.Wakeup
}

// FD returns the wake-up's descriptor, which the loop's poller watches.
func (ib *Inbox[T]) FD() int { return ib.wake.FD() }

// NewInbox makes an inbox and its wake-up descriptor.
func NewInbox[T any]() (*Inbox[T], error) {
	w, err := netpoll.NewWakeup()
	if err != nil {
		return nil, err
	}
	return &Inbox[T]{wake: w}, nil
}

// Post queues t and reports whether the loop will run it: false once the loop has stopped.
func (ib *Inbox[T]) Post(t T) bool {
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

// Take clears the wake-up and returns the queued tasks; the caller hands the slice back with
// Recycle once it has run them.
func (ib *Inbox[T]) Take() []T {
	ib.wake.Clear()
	ib.mu.Lock()
	q := ib.queue
	ib.queue = ib.spare[:0]
	ib.spare = nil
	ib.mu.Unlock()
	return q
}

// Recycle takes back the slice Take returned, once its tasks have run.
func (ib *Inbox[T]) Recycle(q []T) {
	clear(q)
	ib.mu.Lock()
	ib.spare = q[:0]
	ib.mu.Unlock()
}

// Close refuses later posts and returns what was queued but never run.
func (ib *Inbox[T]) Close() []T {
	ib.mu.Lock()
	ib.closed = true
	q := ib.queue
	ib.queue = nil
	ib.mu.Unlock()
	ib.wake.Close()
	return q
}
