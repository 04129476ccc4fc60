package wait

import (
	"context"
	"sync"
	"time"

	"github.com/dwellhttp/dwell/core"
)

// A Sequence is a number that only grows — how many times an event fired, the sequence number
// of a log's last entry — together with the handlers waiting for it to pass their cursor. It is
// what Event and Topic are built on, and what a topic kept elsewhere (in a message broker's
// stream, say) needs to wake the handlers of every loop: the goroutine that learns of new
// entries calls Advance, and a handler that has seen everything up to its cursor waits with
// Wait or OnWait until the sequence passes it, then reads what came.
//
// Advance never touches a waiter. It posts one task to each loop that has waiters and has no
// such task pending, so a burst of advances costs one post per loop; the task runs on its loop
// and wakes, oldest cursor first, the loop's waiters that the sequence has passed. Waiter lists
// are per loop and touched by their loop alone; a waiter is a node of five words, unlinked in
// O(1) when its wait times out or its client leaves.
//
// A goroutine waits with WaitContext instead: the goroutines waiting on a Sequence share one
// channel, which the next advance closes, so that waiting costs them their own goroutine and
// nothing more, and no loop is involved.
//
// The zero value is a Sequence at 0, ready to use. A Sequence must not be copied after first
// use. Value, Advance and WaitContext may be called from any goroutine; Wait and OnWait from a
// handler.
type Sequence struct {
	mu    sync.Mutex
	seq   uint64      // the value; raised by Advance
	lists []*waitList // one per loop that has had waiters; see addLocked
	// passed is closed by the next advance, for the goroutines in WaitContext; nil while none
	// waits, so that an advance nobody waits for on a goroutine allocates nothing.
	passed chan struct{}
}

// A waitList is the handlers of one loop waiting on one Sequence, in the order of their cursors.
// A drain stops at the first waiter whose cursor the sequence has not passed. Everything in a
// waitList except n and posted belongs to its loop alone; n and posted are read by advancers,
// so they are guarded by the Sequence's mu.
type waitList struct {
	s          *Sequence
	loop       *core.Loop
	n          int  // linked waiters; changed on the loop only, under s.mu
	posted     bool // a drain is queued on the loop; under s.mu
	head, tail *waiter
	drainFn    func() // wl.drain, made once so that posting allocates nothing
}

// A waiter is one waiting handler: an intrusive list node, so that a wait that times out or
// whose client leaves unlinks itself without a search, however many wait, and the Waker of its
// park. Its list is found again from its handler's loop (among a handful) rather than kept in
// the node.
type waiter struct {
	prev, next *waiter
	w          core.Waker
	seq        uint64 // the cursor: woken once the sequence is past it
}

// Value returns the sequence's current value.
func (s *Sequence) Value() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.seq
}

// Advance raises the sequence to n and wakes the handlers waiting for it to pass a cursor below
// n, each on its own loop. An n at or below the current value changes nothing, so that
// goroutines advancing at once may do so in any order. Advance never blocks on the waiters.
func (s *Sequence) Advance(n uint64) {
	s.mu.Lock()
	if n > s.seq {
		s.seq = n
		s.notifyLocked()
	}
	s.mu.Unlock()
}

// Wait parks the handler until the sequence is past after, and returns nil then — at once,
// without parking, when it already is. It returns ErrTimeout after timeout (timeout <= 0 means
// no deadline), ErrClosed if the client goes away, ErrShutdown if a shutdown's grace period
// ends first (or as soon as a shutdown begins, after core.Seam.WakeOnShutdown), and
// core.ErrDeadline if the request's deadline passes. Call it from c's handler.
func (s *Sequence) Wait(c *core.Ctx, after uint64, timeout time.Duration) error {
	if err := c.Seam().CheckCaller("wait.Sequence.Wait"); err != nil {
		return err // before the waiter goes into the loop's list
	}
	w := s.park(c, after)
	if w == nil {
		return nil
	}
	// The frames of a parked handler stay on its stack, which stays at its first 2 KiB only
	// while they are small: this one holds little more than w.
	err := c.Suspend(timeout)
	s.remove(c, w)
	return err
}

// WaitContext is Wait for a goroutine: it blocks until the sequence is past after, and returns
// nil then — at once when it already is — or ctx.Err() when ctx ends first. It holds nothing of
// a loop's, so it may be called from any goroutine (a net/http handler behind the bridge, a
// worker, a gRPC stream); not from a dwell handler, whose loop it would block: there, use Wait.
func (s *Sequence) WaitContext(ctx context.Context, after uint64) error {
	for {
		s.mu.Lock()
		if s.seq > after {
			s.mu.Unlock()
			return nil
		}
		if s.passed == nil {
			s.passed = make(chan struct{})
		}
		passed := s.passed
		s.mu.Unlock()
		select {
		case <-passed:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// park links a waiter for c when the sequence has not passed after, and returns it; nil when
// it has.
//
//go:noinline
func (s *Sequence) park(c *core.Ctx, after uint64) *waiter {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.seq > after {
		return nil
	}
	w := new(waiter)
	s.addLocked(w, c, after)
	return w
}

// OnWait is the continuation form of Wait: a waiting request costs its connection and a few
// words, not a coroutine. When the sequence is already past after, k runs at once with nil,
// before OnWait returns. Otherwise the handler is detached (core.Ctx.Detach): it must return
// right after OnWait, and k runs later on c's loop with c and what Wait would have returned;
// the response is finished when k returns, unless k waits again.
//
// k cannot park: no Wait, Sleep, Do or body reads, and its writes past the high-water mark
// queue up instead of waiting. The request's values (path, query, headers) are gone once
// the handler returns: copy what k needs before calling OnWait. Call OnWait from c's handler,
// or from a continuation to wait again.
func (s *Sequence) OnWait(c *core.Ctx, after uint64, timeout time.Duration, k func(c *core.Ctx, err error)) {
	if err := c.Seam().CheckCaller("wait.Sequence.OnWait"); err != nil {
		panic(err) // before the waiter goes into the loop's list
	}
	s.mu.Lock()
	if s.seq > after {
		s.mu.Unlock()
		k(c, nil)
		return
	}
	w := &waitCont{s: s, k: k}
	s.addLocked(&w.waiter, c, after)
	s.mu.Unlock()
	c.Detach(timeout, w.wake)
}

// A waitCont is a request waiting in OnWait: its waiter node and its continuation.
type waitCont struct {
	waiter
	s *Sequence
	k func(*core.Ctx, error)
}

// wake is the detached request's continuation, on the loop.
func (w *waitCont) wake(c *core.Ctx, err error) {
	w.s.remove(c, &w.waiter)
	w.k(c, err)
}

// addLocked links w for c's handler into c's loop list, waiting for the sequence to pass
// cursor, behind the waiters whose cursor is not above it. Cursors mostly arrive in order (a
// waiter's cursor is usually the value at the time), so the place is found at the tail. Call it
// on c's loop with s.mu held.
//
// A loop's list stays when its last waiter goes, so that handlers waiting one at a time do not
// make a list each. Idle lists are dropped when a loop needs a new one: that is how the lists of
// a stopped server's loops go, so that a Sequence outliving a server does not keep its loops.
func (s *Sequence) addLocked(w *waiter, c *core.Ctx, cursor uint64) {
	l := c.Seam().Loop()
	wl := s.listLocked(l)
	if wl == nil {
		s.dropIdleLocked()
		wl = &waitList{s: s, loop: l}
		wl.drainFn = wl.drain
		s.lists = append(s.lists, wl)
	}
	wl.n++
	w.w = c.Waker() // for the park that follows at once: Suspend, or the Detach of OnWait
	w.seq = cursor
	prev := wl.tail
	for prev != nil && prev.seq > cursor {
		prev = prev.prev
	}
	w.prev = prev
	if prev != nil {
		w.next = prev.next
		prev.next = w
	} else {
		w.next = wl.head
		wl.head = w
	}
	if w.next != nil {
		w.next.prev = w
	} else {
		wl.tail = w
	}
}

// listLocked returns the list of loop l, or nil. There are as many lists as loops with
// waiters, a handful, so a scan beats a map. s.mu is held.
func (s *Sequence) listLocked(l *core.Loop) *waitList {
	for _, wl := range s.lists {
		if wl.loop == l {
			return wl
		}
	}
	return nil
}

// remove unlinks c's waiter w if it is still linked (a drain unlinks the waiters it wakes).
// Call it on c's loop, once its wait has ended.
func (s *Sequence) remove(c *core.Ctx, w *waiter) {
	s.mu.Lock()
	if wl := s.listLocked(c.Seam().Loop()); wl != nil && (w.prev != nil || wl.head == w) {
		wl.cut(w)
		wl.n--
	}
	s.mu.Unlock()
}

// cut splices w out of wl's links; the caller accounts for n.
func (wl *waitList) cut(w *waiter) {
	if w.prev != nil {
		w.prev.next = w.next
	} else {
		wl.head = w.next
	}
	if w.next != nil {
		w.next.prev = w.prev
	} else {
		wl.tail = w.prev
	}
	w.prev, w.next = nil, nil
}

// dropIdleLocked forgets the lists with no waiters and no drain pending. s.mu is held.
func (s *Sequence) dropIdleLocked() {
	keep := s.lists[:0]
	for _, wl := range s.lists {
		if wl.n != 0 || wl.posted {
			keep = append(keep, wl)
		}
	}
	clear(s.lists[len(keep):])
	s.lists = keep
}

// notifyLocked wakes the goroutines in WaitContext and posts a drain to every loop that has
// waiters and no drain pending. s.mu is held; posting under it keeps an advance to one
// allocation-free pass, and the loop never takes s.mu while it holds its inbox lock, so the
// order is safe.
func (s *Sequence) notifyLocked() {
	if s.passed != nil {
		close(s.passed)
		s.passed = nil
	}
	for _, wl := range s.lists {
		if wl.n == 0 || wl.posted {
			continue
		}
		if wl.loop.Post(wl.drainFn) == nil {
			wl.posted = true
		}
		// A refused post means the loop has stopped; its handlers were woken with
		// ErrShutdown and unlink themselves.
	}
}

// drain runs on the list's loop: it wakes, oldest cursor first, every waiter whose cursor the
// sequence has passed. A waking only makes a handler ready (and for a detached one, its
// continuation), so nothing runs inside the loop over the list: the wake is the loop's own
// (Loop.Wake), made at once, without the inbox.
func (wl *waitList) drain() {
	s := wl.s
	s.mu.Lock()
	wl.posted = false
	seq := s.seq
	s.mu.Unlock()
	woken := 0
	for w := wl.head; w != nil && w.seq < seq; w = wl.head {
		wl.cut(w)
		wl.loop.Wake(w.w, nil)
		woken++
	}
	s.mu.Lock()
	wl.n -= woken
	s.mu.Unlock()
}
