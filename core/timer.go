package core

import (
	"time"

	"github.com/dwellhttp/dwell/internal/alias"
)

// A timer is a deadline in its loop's 4-ary min-heap. Timers live inside the structures they
// serve (a connection, a Ctx, a Timer), so arming one allocates nothing, and the loop's
// poll's timeout is the earliest of them. A 4-ary heap is shallower than a binary one, and a
// parent's four children are adjacent in the heap's slice of pointers (one cache line of them).
//
// A timer is always the first field of its owner, and kind says which owner that is: the *timer
// that fires is then also a pointer to its owner (see Loop.runTimer). That keeps each timer at 16
// bytes, where an interface to its owner would add 16 more to every connection and request.
type timer struct {
	when  int64 // loop clock, nanoseconds
	index int32 // position in the heap; -1 when not armed
	kind  timerKind
}

type timerKind uint8

const (
	timerConn timerKind = iota + 1 // the first field of a conn
	timerCtx                       // the first field of a Ctx
	timerFunc                      // the first field of a Timer
)

func (t *timer) init(k timerKind) {
	t.index = -1
	t.kind = k
}

func (t *timer) armed() bool { return t.index >= 0 }

// The casts in runTimer hold because each owner's timer is its first field, at offset 0
// (TestTimerOwnersFirst checks it). A timer is stopped when its owner is released (conn.close,
// Ctx.recycle) — before a pooled conn or Ctx can serve another connection or request — so a
// cast never reaches an owner that moved on; a Timer of AfterFunc is the caller's own
// allocation, never reused.

// runTimer calls the owner of a due timer.
func (l *Loop) runTimer(t *timer) {
	switch t.kind {
	case timerConn:
		alias.Outer[conn](t).onDeadline(l)
	case timerCtx:
		alias.Outer[Ctx](t).onTimeout()
	case timerFunc:
		l.safely(alias.Outer[Timer](t).f)
	}
}

type timerHeap struct{ h []*timer }

// appendDoubling appends v to s, doubling the capacity when it is full. The tables that grow with
// the number of connections (the timer heap, the descriptor table) grow this way rather than by
// append's smaller steps for large slices: every step leaves the old array behind as garbage,
// which shows in the process's memory until a collection, and doubling leaves the least.
func appendDoubling[T any](s []T, v T) []T {
	if len(s) == cap(s) {
		n := make([]T, len(s), max(2*cap(s), 1024))
		copy(n, s)
		s = n
	}
	return append(s, v)
}

// next returns the earliest deadline, or false when no timer is armed.
func (th *timerHeap) next() (int64, bool) {
	if len(th.h) == 0 {
		return 0, false
	}
	return th.h[0].when, true
}

// set arms t for when, moving it if it is already armed.
func (th *timerHeap) set(t *timer, when int64) {
	if t.index >= 0 {
		old := t.when
		t.when = when
		if when < old {
			th.up(int(t.index))
		} else {
			th.down(int(t.index))
		}
		return
	}
	t.when = when
	t.index = int32(len(th.h))
	th.h = appendDoubling(th.h, t)
	th.up(int(t.index))
}

// stop disarms t; it is a no-op for a timer that is not armed.
func (th *timerHeap) stop(t *timer) {
	i := int(t.index)
	if i < 0 {
		return
	}
	last := len(th.h) - 1
	if i != last {
		th.h[i] = th.h[last]
		th.h[i].index = int32(i)
	}
	th.h[last] = nil
	th.h = th.h[:last]
	t.index = -1
	if i != last {
		th.down(i)
		th.up(i)
	}
}

// popDue removes and returns the earliest timer if it is due at now.
func (th *timerHeap) popDue(now int64) *timer {
	if len(th.h) == 0 || th.h[0].when > now {
		return nil
	}
	t := th.h[0]
	th.stop(t)
	return t
}

func (th *timerHeap) up(i int) {
	h := th.h
	t := h[i]
	for i > 0 {
		p := (i - 1) / 4
		if h[p].when <= t.when {
			break
		}
		h[i] = h[p]
		h[i].index = int32(i)
		i = p
	}
	h[i] = t
	t.index = int32(i)
}

func (th *timerHeap) down(i int) {
	h := th.h
	n := len(h)
	t := h[i]
	for {
		c := 4*i + 1
		if c >= n {
			break
		}
		m := c
		for j := c + 1; j < c+4 && j < n; j++ {
			if h[j].when < h[m].when {
				m = j
			}
		}
		if h[m].when >= t.when {
			break
		}
		h[i] = h[m]
		h[i].index = int32(i)
		i = m
	}
	h[i] = t
	t.index = int32(i)
}

// A Timer is a callback on a loop's timer heap, made by Loop.AfterFunc. It fires on the loop.
type Timer struct {
	t timer // first: see timer
	l *Loop
	f func()
}

// Stop prevents the Timer from firing and reports whether it was still armed. Call it on the
// Timer's loop (from the handler, a timer or a Post callback); elsewhere it panics.
func (t *Timer) Stop() bool {
	t.l.mustBeOnLoop("Timer.Stop")
	return t.stop()
}

func (t *Timer) stop() bool {
	if !t.t.armed() {
		return false
	}
	t.l.timers.stop(&t.t)
	return true
}

// AfterFunc arranges for f to run on the loop after d, and returns a Timer that can stop it.
// Call it on the loop (from a handler, a Post callback or another timer); elsewhere it panics,
// since the timers are the loop's alone (Post a function that calls it). f runs outside any
// request: it must not block, and cannot park, and it may not use a request's Ctx (wake a
// handler with a Waker); a panic in it is logged and the loop goes on. A Timer belongs to the
// loop, not to a request: stop it when the request ends if f must not run after that.
func (l *Loop) AfterFunc(d time.Duration, f func()) *Timer {
	l.mustBeOnLoop("Loop.AfterFunc")
	t := &Timer{l: l, f: f}
	t.t.init(timerFunc)
	l.timers.set(&t.t, l.clock()+int64(max(d, 0)))
	return t
}

// Reset re-arms the Timer to fire d from now, whether or not it has fired. Call it on the
// Timer's loop; elsewhere it panics.
func (t *Timer) Reset(d time.Duration) {
	t.l.mustBeOnLoop("Timer.Reset")
	t.reset(d)
}

func (t *Timer) reset(d time.Duration) {
	t.l.timers.set(&t.t, t.l.clock()+int64(max(d, 0)))
}
