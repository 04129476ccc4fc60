package wait

import (
	"sync"

	"github.com/dwellhttp/dwell/core"
)

// A hub is the waiting side of an Event or a Topic: a sequence number that every Fire or Publish
// advances, and for each loop with waiters, a list of the handlers waiting for it to pass their
// cursor.
//
// Publishers run on any goroutine and never touch a waiter: they advance seq and post one drain
// to each loop that has waiters and no drain pending yet. The drain runs on its loop and wakes
// the waiters whose cursor seq has passed. Everything in a waitList except n and posted belongs
// to its loop alone; n and posted are read by publishers, so they are guarded by mu.
type hub struct {
	mu    sync.Mutex
	seq   uint64      // how many fires or publishes so far
	lists []*waitList // one per loop that has had waiters; see addLocked
}

// A waitList is the handlers of one loop that wait on one hub, oldest first. Waiters are
// appended with the hub's seq at the time, so cursors never decrease along the list and a
// drain stops at the first waiter it must not wake.
type waitList struct {
	h          *hub
	loop       *core.Loop
	n          int  // linked waiters; changed on the loop only, under h.mu
	posted     bool // a drain is queued on the loop; under h.mu
	head, tail *waiter
	drainFn    func() // wl.drain, made once so that posting allocates nothing
}

// A waiter is one waiting handler: an intrusive list node of four words, so that a wait that
// times out or whose client leaves unlinks itself without a search, however many wait. Its
// list is found again from its handler's loop (among a handful) rather than kept in the node.
type waiter struct {
	prev, next *waiter
	c          *core.Ctx
	seq        uint64 // the cursor: woken once the hub's seq is past it
}

// addLocked links w for c's handler at the tail of c's loop list, waiting for seq to pass
// cursor. Call it on c's loop with h.mu held.
//
// A loop's list stays when its last waiter goes, so that handlers waiting one at a time do not
// make a list each. Idle lists are dropped when a loop needs a new one: that is how the lists of
// a stopped server's loops go, so that a hub outliving a server does not keep its loops.
func (h *hub) addLocked(w *waiter, c *core.Ctx, cursor uint64) {
	l := c.Loop()
	wl := h.listLocked(l)
	if wl == nil {
		h.dropIdleLocked()
		wl = &waitList{h: h, loop: l}
		wl.drainFn = wl.drain
		h.lists = append(h.lists, wl)
	}
	wl.n++
	w.c = c
	w.seq = cursor
	w.prev = wl.tail
	if wl.tail != nil {
		wl.tail.next = w
	} else {
		wl.head = w
	}
	wl.tail = w
}

// listLocked returns the list of loop l, or nil. There are as many lists as loops with
// waiters, a handful, so a scan beats a map. h.mu is held.
func (h *hub) listLocked(l *core.Loop) *waitList {
	for _, wl := range h.lists {
		if wl.loop == l {
			return wl
		}
	}
	return nil
}

// remove unlinks w if it is still linked (a drain unlinks the waiters it wakes). Call it on w's
// loop, once its wait has ended.
func (h *hub) remove(w *waiter) {
	h.mu.Lock()
	if wl := h.listLocked(w.c.Loop()); wl != nil && (w.prev != nil || wl.head == w) {
		wl.cut(w)
		wl.n--
	}
	h.mu.Unlock()
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

// dropIdleLocked forgets the lists with no waiters and no drain pending. h.mu is held.
func (h *hub) dropIdleLocked() {
	keep := h.lists[:0]
	for _, wl := range h.lists {
		if wl.n != 0 || wl.posted {
			keep = append(keep, wl)
		}
	}
	clear(h.lists[len(keep):])
	h.lists = keep
}

// notifyLocked posts a drain to every loop that has waiters and no drain pending. h.mu is held;
// posting under it keeps a publish to one allocation-free pass, and the loop never takes h.mu
// while it holds its inbox lock, so the order is safe.
func (h *hub) notifyLocked() {
	for _, wl := range h.lists {
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

// drain runs on the list's loop: it wakes, oldest first, every waiter whose cursor the hub's
// seq has passed. Resume only makes a handler ready (and for a detached one, its continuation),
// so nothing runs inside the loop over the list.
func (wl *waitList) drain() {
	h := wl.h
	h.mu.Lock()
	wl.posted = false
	seq := h.seq
	h.mu.Unlock()
	woken := 0
	for w := wl.head; w != nil && w.seq < seq; w = wl.head {
		wl.cut(w)
		w.c.Resume(nil)
		woken++
	}
	h.mu.Lock()
	wl.n -= woken
	h.mu.Unlock()
}
