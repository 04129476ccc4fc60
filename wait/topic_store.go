package wait

import (
	"context"
	"fmt"

	"github.com/dwellhttp/dwell/core"
)

// A stored topic. A Topic keeps its messages in memory, numbered from 1 in each process; a
// client that comes back after a restart with its cursor would find the numbers started again
// and its messages gone. A Topic made with NewStoredTopic continues the history of the
// application's store instead: its first message is numbered after the store's last, and the
// cursors older than its memory are answered from the store:
//
//	cursor < floor          Store.Read(cursor, floor): a page of at most history messages
//	floor <= cursor < last  the memory (ring): at once, under the topic's lock
//	cursor >= last          wait (the Sequence's waiter list), as any topic
//
// where floor is the cursor from which the memory answers: Store.Last until history messages
// have been published, then last less history. Reads of the store never run on a loop: Next
// reads through Do (the handler parks), OnNext from a continuation detaches its request while
// a worker of the same pool reads and wakes it.

// A Store is where a Topic's history lives beyond the process: the application's database,
// which keeps every message under the number the topic gives it and outlives restarts.
//
// The topic numbers messages as it publishes them, so the store must take them in that order
// and under those numbers: store message Last()+1, then Publish it, under one lock of the
// application's (the lock that orders its writes). A message is stored before it is published,
// so that no client ever sees a message that a crash could take back: after a restart its
// number would be given to another one. One stored and not yet published when the process
// stops is not lost: clients find it in the store.
type Store[T any] struct {
	// Last is the sequence number of the last message stored when the topic is made (0 for
	// none): the topic continues from it, numbering its first message Last+1.
	Last uint64

	// Read returns the stored messages with sequence numbers in (after, upto], oldest first,
	// at most limit of them (a page: the topic asks again for the rest), and the sequence
	// number of the last one returned, the cursor after them; never one past upto, which
	// the topic has published (a message stored and not yet published is not to be given).
	// When some of them are no longer stored (the application pruned its log), it returns
	// those it has with ErrMissed; none at all with a nil error counts as the same. Any other
	// error ends the read: Next returns it, OnNext gives it to its continuation.
	//
	// Read blocks: the topic calls it on the worker pool of Do (Since excepted, which blocks
	// its caller), with the request's context, cancelled when the client leaves. It may be
	// called from several goroutines at once.
	Read func(ctx context.Context, after, upto uint64, limit int) (msgs []T, last uint64, err error)
}

// NewStoredTopic returns a Topic that keeps the last history messages (at least 1) in memory
// and continues the history of s: the first message published is numbered s.Last+1, and a
// cursor older than the memory is answered by s.Read. With a nil s.Read the topic only
// continues the numbering: older cursors get ErrMissed with what the memory keeps (none, right
// after a start).
func NewStoredTopic[T any](history int, s Store[T]) *Topic[T] {
	t := NewTopic[T](history)
	t.base = s.Last
	t.h.seq = s.Last
	t.read = s.Read
	return t
}

// stored reports whether the messages after cursor are to be read from the store, and up to
// which sequence number: those the memory no longer holds.
func (t *Topic[T]) stored(cursor uint64) (upto uint64, ok bool) {
	if t.read == nil {
		return 0, false // a topic of memory alone: no lock taken for nothing
	}
	t.h.mu.Lock()
	defer t.h.mu.Unlock()
	return t.storedLocked(min(cursor, t.h.seq))
}

// storedLocked is stored with t.h.mu held, for a cursor not ahead of the topic.
func (t *Topic[T]) storedLocked(cursor uint64) (upto uint64, ok bool) {
	if t.read == nil {
		return 0, false
	}
	floor := t.floorLocked()
	return floor, cursor < floor
}

// readStore reads a page of the messages in (cursor, upto] from the store. A page of none, or
// one that does not move the cursor, means the store no longer has them: the memory's
// messages are answered instead, with ErrMissed.
func (t *Topic[T]) readStore(ctx context.Context, cursor, upto uint64) ([]T, uint64, error) {
	msgs, last, err := t.read(ctx, cursor, upto, len(t.ring))
	if err != nil && err != ErrMissed {
		return nil, cursor, err
	}
	if len(msgs) > 0 && last > cursor {
		return msgs, last, err
	}
	t.h.mu.Lock()
	defer t.h.mu.Unlock()
	msgs, last, _ = t.sinceLocked(upto)
	return msgs, last, ErrMissed
}

// sinceIn is Since for Next, in c's handler: a read of the store runs on the worker pool while
// the handler parks. Not inlined, so that Next's frame, on the stack of every parked handler,
// stays small.
//
//go:noinline
func (t *Topic[T]) sinceIn(c *core.Ctx, cursor uint64) ([]T, uint64, error) {
	upto, ok := t.stored(cursor)
	if !ok {
		return t.Since(cursor)
	}
	var msgs []T
	last, err := cursor, error(nil)
	ctx := c.Context()
	if derr := Do(c, func() { msgs, last, err = t.readStore(ctx, cursor, upto) }); derr != nil {
		return nil, cursor, derr
	}
	return msgs, last, err
}

// readThen reads the messages in (cursor, upto] from the store for OnNext and gives them to k:
// from the handler through Do, before it returns; from a continuation, which cannot park, by
// detaching the request while a worker of Do's pool reads, and waking it with the page.
func (t *Topic[T]) readThen(c *core.Ctx, cursor, upto uint64, k func(*core.Ctx, []T, uint64, error)) {
	r := &pageRead[T]{t: t, k: k, cursor: cursor, upto: upto, ctx: c.Context()}
	if c.Seam().MayPark() {
		if err := Do(c, r.read); err != nil {
			k(c, nil, cursor, err)
			return
		}
		k(c, r.msgs, r.last, r.err)
		return
	}
	r.w = c.Waker()
	c.Detach(0, r.done)
	defaultPool.workers.Start(r)
}

// A pageRead is a read of the store for a request in OnNext: where it reads, the continuation
// to give the page to, and the page.
type pageRead[T any] struct {
	t            *Topic[T]
	k            func(*core.Ctx, []T, uint64, error)
	cursor, upto uint64
	ctx          context.Context
	w            core.Waker // the detached request's, when a worker reads for a continuation

	msgs []T // the page, written by the read before it wakes the request
	last uint64
	err  error
}

func (r *pageRead[T]) read() { r.msgs, r.last, r.err = r.t.readStore(r.ctx, r.cursor, r.upto) }

// Run is the read on a worker, for a continuation: it wakes the request, which gives the page
// to k. A panic in Read is the page's error, the worker lives on.
func (r *pageRead[T]) Run() {
	defer func() {
		if p := recover(); p != nil {
			r.msgs, r.last, r.err = nil, r.cursor, fmt.Errorf("dwell: panic in a wait.Store's Read: %v", p)
		}
		r.w.Wake(nil)
	}()
	r.read()
}

// done is the detached request's continuation, on its loop, once the worker has read (err nil)
// or the request ended first: the page is then the worker's still, and not touched.
func (r *pageRead[T]) done(c *core.Ctx, err error) {
	if err != nil {
		r.k(c, nil, r.cursor, err)
		return
	}
	r.k(c, r.msgs, r.last, r.err)
}
