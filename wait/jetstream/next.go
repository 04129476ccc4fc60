package jetstream

import (
	"context"
	"errors"
	"time"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/wait"
)

// Next returns the messages after the cursor after, oldest first (at most Config.History of
// them), with the sequence number of the last one: the caller's next cursor. When there are
// none yet it parks the handler until one is received or timeout passes (timeout <= 0 means no
// deadline).
//
// Cursors this process holds in memory are answered at once; older ones, and cursors ahead of
// what it has received, are looked up in the stream on wait's worker pool. A cursor ahead of
// the stream itself (from a stream created anew, say) counts as the stream's last sequence.
//
// Errors: wait.ErrMissed comes with messages when the stream no longer holds some of those
// after the cursor (its limits removed them); an error wrapping ErrUnavailable when they had to
// be read from the stream and NATS could not answer; wait.ErrTimeout, wait.ErrClosed and
// wait.ErrShutdown come with no messages and the cursor to poll from next. ErrShutdown comes as
// soon as a shutdown begins (core.Seam.WakeOnShutdown), so that a long poll answers at once and
// its client polls again at another instance.
//
// The slice is the caller's. Call Next from c's handler.
func (t *Topic[T]) Next(c *core.Ctx, after uint64, timeout time.Duration) ([]T, uint64, error) {
	c.Seam().WakeOnShutdown()
	msgs, cursor, err := t.collect(c, after)
	if len(msgs) > 0 || err != nil {
		return msgs, cursor, err
	}
	deadline := deadlineOf(timeout)
	for {
		// The frames of a parked handler stay on its stack: this one holds little more than
		// the cursor and the deadline.
		if err := t.seq.Wait(c, cursor, timeout); err != nil {
			return nil, cursor, err
		}
		msgs, cursor, err = t.collect(c, cursor)
		if len(msgs) > 0 || err != nil {
			return msgs, cursor, err
		}
		// Only messages Decode refused came: wait for the rest of the time.
		if timeout, err = remaining(deadline); err != nil {
			return nil, cursor, err
		}
	}
}

// NextContext is Next for a goroutine — a net/http handler behind the bridge, a gRPC server
// stream, a worker: it blocks until there are messages after the cursor after and returns them,
// as Next does, or returns none, the cursor to wait from next and ctx.Err() once ctx ends.
// Cursors older than the process's memory are read from the stream on the calling goroutine,
// with ctx. Following the topic is a loop of NextContext calls, each from the cursor the last
// returned: nothing received between two calls is missed.
//
// It holds nothing of a loop's (see wait.Sequence.WaitContext). Call it from any goroutine but
// a dwell handler's, whose loop it would block: there, use Next or OnNext.
func (t *Topic[T]) NextContext(ctx context.Context, after uint64) ([]T, uint64, error) {
	cursor := after
	for {
		msgs, last, err := t.Since(ctx, cursor)
		if len(msgs) > 0 || err != nil {
			return msgs, last, err
		}
		// None yet, or only messages Decode refused: wait for the next one received.
		cursor = last
		if err := t.seq.WaitContext(ctx, cursor); err != nil {
			return nil, cursor, err
		}
	}
}

// deadlineOf returns when a wait of timeout ends; the zero time for no deadline.
func deadlineOf(timeout time.Duration) time.Time {
	if timeout <= 0 {
		return time.Time{}
	}
	return time.Now().Add(timeout)
}

// remaining returns the timeout left before deadline (0, none, for the zero time), or
// wait.ErrTimeout when it has passed.
func remaining(deadline time.Time) (time.Duration, error) {
	if deadline.IsZero() {
		return 0, nil
	}
	d := time.Until(deadline)
	if d <= 0 {
		return 0, wait.ErrTimeout
	}
	return d, nil
}

// collect returns what came after the cursor, from memory when it covers the cursor, else from
// the stream through wait.Do.
//
//go:noinline
func (t *Topic[T]) collect(c *core.Ctx, after uint64) (msgs []T, last uint64, err error) {
	if msgs, last, ok := t.fromMemory(after); ok {
		return msgs, last, nil
	}
	ctx := c.Context()
	if derr := wait.Do(c, func() { msgs, last, err = t.read(ctx, after) }); derr != nil {
		return nil, after, derr
	}
	return msgs, last, err
}

// fromMemory returns the messages after the cursor and the last sequence number, when the
// history covers the cursor.
func (t *Topic[T]) fromMemory(after uint64) ([]T, uint64, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.mem.covers(after) {
		return nil, 0, false
	}
	return t.mem.since(after), t.mem.last, true
}

// Since returns at once what Next would return at once: the messages after the cursor after
// (at most Config.History), with the last one's sequence number, or none and the cursor to
// poll from; errors as for Next. It may be called from any goroutine. It blocks when it must
// read the stream (a cursor older than the process's memory): from a handler, call it through
// wait.Do.
func (t *Topic[T]) Since(ctx context.Context, after uint64) ([]T, uint64, error) {
	if msgs, last, ok := t.fromMemory(after); ok {
		return msgs, last, nil
	}
	return t.read(ctx, after)
}

// OnNext is the continuation form of Next: a waiting request costs its connection and a few
// words, not a coroutine. Like Next, it ends with ErrShutdown as soon as a shutdown begins.
// When messages are already there, k runs at once, before OnNext returns. Otherwise the handler
// is detached (core.Ctx.Detach): it must return right after OnNext, and k runs later on c's
// loop with c and what Next would have returned; the response is finished when k returns,
// unless k detaches again (with another OnNext, say).
//
// k cannot park: no Next, wait.Sleep, wait.Do or body reads, and its writes past the
// high-water mark queue up instead of waiting. The request's values (path, query,
// headers) are gone once the handler returns: copy what k needs before calling OnNext. Call OnNext
// from c's handler, or from a continuation to wait again.
func (t *Topic[T]) OnNext(c *core.Ctx, after uint64, timeout time.Duration, k func(c *core.Ctx, msgs []T, last uint64, err error)) {
	c.Seam().WakeOnShutdown()
	msgs, cursor, ok := t.fromMemory(after)
	var err error
	if !ok {
		ctx := c.Context()
		derr := wait.Do(c, func() { msgs, cursor, err = t.read(ctx, after) })
		switch {
		case derr == nil:
		case errors.Is(derr, core.ErrOutsideRequest):
			// A continuation waiting again, which cannot park: read without a coroutine.
			n := &nextCont[T]{t: t, k: k, cursor: after, deadline: deadlineOf(timeout)}
			n.readThen(c)
			return
		default:
			k(c, nil, after, derr)
			return
		}
	}
	if len(msgs) > 0 || err != nil {
		k(c, msgs, cursor, err)
		return
	}
	n := &nextCont[T]{t: t, k: k, deadline: deadlineOf(timeout)}
	n.wait(c, cursor)
}

// A nextCont is a request in OnNext that could not be answered at once: what its
// continuations need.
type nextCont[T any] struct {
	t        *Topic[T]
	k        func(*core.Ctx, []T, uint64, error)
	cursor   uint64
	deadline time.Time // zero for none
	msgs     []T       // a read of the stream (readThen), handed over by the Waker's wake-up
	last     uint64
	err      error
}

// wait detaches c until a message comes after the cursor, or the deadline passes.
func (n *nextCont[T]) wait(c *core.Ctx, cursor uint64) {
	n.cursor = cursor
	timeout, err := remaining(n.deadline)
	if err != nil {
		n.k(c, nil, cursor, err)
		return
	}
	n.t.seq.OnWait(c, cursor, timeout, n.woken)
}

// woken is the continuation of a request that waited for a message, on the loop.
func (n *nextCont[T]) woken(c *core.Ctx, err error) {
	if err != nil {
		n.k(c, nil, n.cursor, err)
		return
	}
	msgs, last, ok := n.t.fromMemory(n.cursor)
	switch {
	case !ok: // more than History messages came at once: the rest are read from the stream
		n.readThen(c)
	case len(msgs) > 0:
		n.k(c, msgs, last, nil)
	default: // only messages Decode refused came
		n.wait(c, last)
	}
}

// readThen reads the stream after the cursor for a request outside its handler, where wait.Do
// cannot park it: the request is detached while a goroutine of its own reads, and wakes it. It
// is the rare path (a continuation that fell more than History messages behind, or followed a
// cursor ahead of the process), so a goroutine for the length of one read is no burden.
func (n *nextCont[T]) readThen(c *core.Ctx) {
	ctx, w := c.Context(), c.Waker()
	c.Detach(0, n.read)
	go func() {
		n.msgs, n.last, n.err = n.t.read(ctx, n.cursor)
		w.Wake(nil)
	}()
}

// read is the continuation of readThen, once the stream has answered (err nil) or the request
// ended first (the read's results are then not to be touched).
func (n *nextCont[T]) read(c *core.Ctx, err error) {
	switch {
	case err != nil:
		n.k(c, nil, n.cursor, err)
	case len(n.msgs) > 0 || n.err != nil:
		n.k(c, n.msgs, n.last, n.err)
	default:
		n.wait(c, n.last)
	}
}
