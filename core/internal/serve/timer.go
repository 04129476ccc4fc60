package serve

import (
	"time"

	"github.com/dwellhttp/dwell/core/internal/engine"
	"github.com/dwellhttp/dwell/internal/alias"
)

// A timer is a deadline in its loop's heap (engine.Heap), the first field of its owner, whose
// kind its Kind says: the *timer that fires is then also a pointer to its owner (see
// Loop.runTimer).
type timer = engine.Timer

// The owners of timers, as a timer's Kind.
const (
	timerConn   uint8 = iota + 1 // the first field of a Socket (its Carrier's): First.Deadline
	TimerStream                  // the first field of a Multiplexer's stream (its Carrier's)
	timerCtx                     // the first field of a Ctx
	timerFunc                    // the first field of a Timer
)

// The casts in runTimer hold because each owner's timer is its first field, at offset 0
// (TestTimerOwnersFirst checks it). A timer is stopped when its owner is released (Socket.Close,
// Ctx.Recycle) — before a pooled Socket or Ctx can serve another connection or request — so a
// cast never reaches an owner that moved on; a Timer of AfterFunc is the caller's own
// allocation, never reused.

// runTimer calls the owner of a due timer.
func (l *Loop) runTimer(t *timer) {
	switch t.Kind {
	case timerConn:
		l.first.Deadline(alias.Outer[Socket](t))
	case TimerStream:
		l.srv.mux.Deadline(t, l)
	case timerCtx:
		alias.Outer[Ctx](t).onTimeout()
	case timerFunc:
		l.safely(alias.Outer[Timer](t).f)
	}
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
	if !t.t.Armed() {
		return false
	}
	t.l.Timers.Stop(&t.t)
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
	t.t.Init(timerFunc)
	l.Timers.Set(&t.t, l.Clk.Read()+int64(max(d, 0)))
	return t
}

// Reset re-arms the Timer to fire d from now, whether or not it has fired. Call it on the
// Timer's loop; elsewhere it panics.
func (t *Timer) Reset(d time.Duration) {
	t.l.mustBeOnLoop("Timer.Reset")
	t.reset(d)
}

func (t *Timer) reset(d time.Duration) {
	t.l.Timers.Set(&t.t, t.l.Clk.Read()+int64(max(d, 0)))
}
