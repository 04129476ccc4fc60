package wait

import (
	"context"
	"time"

	"github.com/dwellhttp/dwell/core"
)

// A Topic is a sequence of messages that handlers follow with a cursor: the long poll. Publish
// numbers each message (1, 2, 3, ...) and keeps the last history of them; Next returns what
// came after a cursor, at once if anything did, else when the next message is published.
//
// A client that keeps its cursor (the last sequence number it saw) never skips a message while
// it reconnects, as long as fewer than history messages were published meanwhile. A cursor older
// than that gets every message still kept together with ErrMissed.
//
// Publish may be called from any goroutine; waiters are woken each on their own loop, with one
// post per loop per burst of publishes. Goroutines follow a topic with NextContext.
//
// A Topic made by NewStoredTopic continues a history kept elsewhere (the application's
// database): its numbers go on from the store's last, and a cursor older than what it keeps in
// memory is answered from the store, so that none is missed across restarts.
type Topic[T any] struct {
	h    Sequence // the last message's sequence number; h.mu also guards ring
	ring []T      // message seq lives at ring[seq%len(ring)]
	// base is the sequence number the topic started after (NewStoredTopic's Store.Last): the
	// messages up to it were published before this Topic existed, and are not in ring.
	base uint64
	// read reads the messages before the memory (Store.Read); nil for none.
	read func(ctx context.Context, after, upto uint64, limit int) ([]T, uint64, error)
}

// NewTopic returns a Topic that keeps the last history messages (at least 1).
func NewTopic[T any](history int) *Topic[T] {
	return &Topic[T]{ring: make([]T, max(history, 1))}
}

// Publish appends v to the topic, wakes the handlers and goroutines waiting for a message,
// and returns v's sequence number. It may be called from any goroutine; it never waits for the
// waiters.
func (t *Topic[T]) Publish(v T) uint64 {
	t.h.mu.Lock()
	t.h.seq++
	seq := t.h.seq
	t.ring[seq%uint64(len(t.ring))] = v
	t.h.notifyLocked()
	t.h.mu.Unlock()
	return seq
}

// PublishFunc is Publish for a message that carries its own sequence number (an event
// stream's id, a field of its JSON): make builds it from the number it gets, under the topic's
// lock, so that numbers and messages cannot cross between publishers — with no lock of the
// caller's around Last()+1. make must be quick and must not call the topic. PublishFunc
// returns the number. A panic in make publishes nothing, and goes on up from PublishFunc with
// the topic unlocked. (wait/jetstream's Topic, whose numbers the stream gives, hands each
// message its number in Config.Decode.)
func (t *Topic[T]) PublishFunc(make func(seq uint64) T) uint64 {
	t.h.mu.Lock()
	seq := t.h.seq + 1
	v := t.build(make, seq)
	t.h.seq = seq
	t.ring[seq%uint64(len(t.ring))] = v
	t.h.notifyLocked()
	t.h.mu.Unlock()
	return seq
}

// build calls make under the topic's lock, which a panic in it gives up: a topic left locked
// would block every later call, and the loops of the handlers that make them.
func (t *Topic[T]) build(make func(seq uint64) T, seq uint64) T {
	panicked := true
	defer func() {
		if panicked {
			t.h.mu.Unlock()
		}
	}()
	v := make(seq)
	panicked = false
	return v
}

// Last returns the sequence number of the last message published (0 before the first).
func (t *Topic[T]) Last() uint64 { return t.h.Value() }

// Next returns the messages published after the cursor after, oldest first, with the sequence
// number of the last one: the caller's next cursor. When there are none yet it parks the
// handler until a message is published or timeout passes (timeout <= 0 means no deadline).
// A stored topic's cursor older than its memory is answered from the store (Store.Read, on
// the worker pool, as Do runs it), at most history messages at a time: the next call returns
// the rest.
//
// Errors: ErrMissed comes with messages when after is older than the history (see Topic);
// an error of a stored topic's Store.Read comes with no messages and after; ErrTimeout,
// ErrClosed, ErrShutdown and core.ErrDeadline come with no messages and the cursor to poll
// from next, which is
// after itself unless after was ahead of the topic. Such a cursor (from before the restart of
// a topic kept in memory alone, say) counts as the topic's last sequence, so the caller gets
// the next message published and a cursor it can follow from there. ErrShutdown comes as soon
// as a shutdown begins (core.Seam.WakeOnShutdown), so that a long poll can answer "nothing
// yet" at once and its client poll again at another instance.
//
// The slice is the caller's. Call Next from c's handler.
func (t *Topic[T]) Next(c *core.Ctx, after uint64, timeout time.Duration) ([]T, uint64, error) {
	c.Seam().WakeOnShutdown()
	cursor := t.cursor(after)
	if err := t.h.Wait(c, cursor, timeout); err != nil {
		return nil, cursor, err
	}
	return t.sinceIn(c, cursor)
}

// NextContext is Next for a goroutine — a net/http handler behind the bridge, a gRPC server
// stream, a worker: it blocks until there are messages after the cursor after and returns them,
// as Next does, or returns none, the cursor to wait from next and ctx.Err() once ctx ends. A
// stored topic's cursor older than its memory is read from the store on the calling goroutine,
// with ctx. Following a topic is a loop of NextContext calls, each from the cursor the last
// returned: nothing published between two calls is missed, as with Next.
//
// It holds nothing of a loop's: the goroutines waiting on a topic share one channel, which the
// next publish closes. Call it from any goroutine but a dwell handler's, whose loop it would
// block: there, use Next or OnNext.
func (t *Topic[T]) NextContext(ctx context.Context, after uint64) ([]T, uint64, error) {
	cursor := t.cursor(after)
	if err := t.h.WaitContext(ctx, cursor); err != nil {
		return nil, cursor, err
	}
	return t.since(ctx, cursor)
}

// cursor returns the cursor to follow the topic from after: after itself, or the last
// sequence number when after is ahead of it.
func (t *Topic[T]) cursor(after uint64) uint64 {
	t.h.mu.Lock()
	defer t.h.mu.Unlock()
	return min(after, t.h.seq)
}

// OnNext is the continuation form of Next, for extreme fan-in: a waiting request costs its
// connection and a few words, not a coroutine. Like Next, it ends with ErrShutdown as soon as
// a shutdown begins. When messages are already there, k runs at once, before OnNext returns.
// Otherwise the handler is detached (core.Ctx.Detach): it must return right after OnNext, and
// k runs later on c's loop with c and what Next would have returned; the response is finished
// when k returns, unless k detaches again (with another OnNext, say). A stored topic's cursor
// older than its memory is answered once the store has: from the handler, before OnNext
// returns, the handler parked meanwhile (as in Do); from a continuation, which cannot park,
// later, the request detached while a worker of Do's pool reads.
//
// k receives the request's Ctx so that it can be a plain function rather than a closure: a
// waiting request then costs nothing more. k cannot park: no Next, Sleep, Do or body reads, and
// its writes past the high-water mark queue up instead of waiting. The request's values (path,
// query, headers) are gone once the handler returns: copy what k needs before calling OnNext.
// Call OnNext from c's handler.
func (t *Topic[T]) OnNext(c *core.Ctx, after uint64, timeout time.Duration, k func(c *core.Ctx, msgs []T, last uint64, err error)) {
	c.Seam().WakeOnShutdown()
	t.h.mu.Lock()
	cursor := min(after, t.h.seq)
	if cursor < t.h.seq {
		if upto, stored := t.storedLocked(cursor); stored {
			t.h.mu.Unlock()
			t.readThen(c, cursor, upto, k)
			return
		}
		msgs, last, err := t.sinceLocked(cursor)
		t.h.mu.Unlock()
		k(c, msgs, last, err)
		return
	}
	w := &nextCont[T]{t: t, k: k}
	t.h.addLocked(&w.waiter, c, cursor)
	t.h.mu.Unlock()
	c.Detach(timeout, w.wake)
}

// A nextCont is a request waiting in OnNext: its waiter node and what its continuation needs.
type nextCont[T any] struct {
	waiter
	t *Topic[T]
	k func(*core.Ctx, []T, uint64, error)
}

// wake is the detached request's continuation, on the loop.
func (w *nextCont[T]) wake(c *core.Ctx, err error) {
	w.t.h.remove(c, &w.waiter)
	if err != nil {
		w.k(c, nil, w.seq, err)
		return
	}
	if upto, stored := w.t.stored(w.seq); stored {
		// More than the memory holds came while it waited: the rest is the store's.
		w.t.readThen(c, w.seq, upto, w.k)
		return
	}
	msgs, last, err := w.t.Since(w.seq)
	w.k(c, msgs, last, err)
}

// Since returns at once what Next would return at once: the messages published after the
// cursor after, with the last one's sequence number (and ErrMissed when after is older than
// the history), or none and the cursor to poll from. It never parks and may be called from any
// goroutine: to read a topic without waiting, or to poll it outside a handler. For a stored
// topic's cursor older than its memory it calls Store.Read, and so blocks while the store
// answers: from a handler, use Next or OnNext, which read it on the worker pool.
func (t *Topic[T]) Since(after uint64) ([]T, uint64, error) {
	return t.since(context.Background(), after)
}

// since is Since reading the store, when it must, with ctx.
func (t *Topic[T]) since(ctx context.Context, after uint64) ([]T, uint64, error) {
	t.h.mu.Lock()
	cursor := min(after, t.h.seq)
	if cursor == t.h.seq {
		t.h.mu.Unlock()
		return nil, cursor, nil
	}
	if upto, stored := t.storedLocked(cursor); stored {
		t.h.mu.Unlock()
		return t.readStore(ctx, cursor, upto)
	}
	defer t.h.mu.Unlock()
	return t.sinceLocked(cursor)
}

// floorLocked returns the cursor from which the memory answers: every message after it, up to
// the last, is in ring. t.h.mu is held.
func (t *Topic[T]) floorLocked() uint64 {
	if n := uint64(len(t.ring)); t.h.seq-t.base > n {
		return t.h.seq - n
	}
	return t.base
}

// sinceLocked copies out the kept messages after cursor, which is below h.seq: all of them, or,
// when some are gone from memory, those kept, with ErrMissed. t.h.mu is held.
func (t *Topic[T]) sinceLocked(cursor uint64) ([]T, uint64, error) {
	last := t.h.seq
	n := uint64(len(t.ring))
	from := cursor
	var err error
	if floor := t.floorLocked(); cursor < floor {
		from, err = floor, ErrMissed
	}
	msgs := make([]T, 0, last-from)
	for s := from + 1; s <= last; s++ {
		msgs = append(msgs, t.ring[s%n])
	}
	return msgs, last, err
}
