package core

import (
	"time"

	"github.com/dwellhttp/dwell/core/internal/serve"
	"github.com/dwellhttp/dwell/internal/alias"
)

// A Loop is one event loop: one goroutine that owns a poller (epoll on Linux), the connections it
// accepted, their timers, the coroutines their handlers run in, and an inbox through which other
// goroutines reach it. Nothing else touches what a Loop owns; handlers of one Loop never run in
// parallel.
type Loop struct{ x serve.Loop }

// A Waker wakes one particular park of a handler — its Suspend, Seam.Hold or Detach — from any
// goroutine, a Loop.Post callback and a timer included: it is the one way to wake a handler.
// Take it before parking; once that park has ended (by a wake, a timeout, the client leaving)
// the Waker does nothing, so it can never wake a later park, or a later request reusing the
// Ctx. Take it right before the park it is for, with nothing that waits in between: a wake
// that reaches the loop while the handler waits for something else (its body, room to write)
// finds no park of its kind and is dropped, and the park that follows waits for its timeout.
type Waker struct{ x serve.Waker }

// A Timer is a callback on a loop's timer heap, made by Loop.AfterFunc. It fires on the loop.
type Timer struct{ x serve.Timer }

// Post runs f on the loop's goroutine, from any goroutine. Posts are never lost: f runs, in
// order with the loop's other posts, unless the loop has stopped, which Post reports as
// ErrShutdown. f runs outside any request: it must not block, and cannot park; a panic in it is
// logged and the loop goes on.
func (l *Loop) Post(f func()) error {
	return l.x.Post(f)
}

// Wake resumes the park w was taken for with err, at once: the loop-side form of Waker.Wake,
// for code that runs on l — a Post callback, a timer, a handler or continuation of l's — which
// wakes a request of its own loop without the inbox's lock and wake-up. The woken handler runs
// at the top of the loop's next iteration, never inside the caller. A wake that finds no park
// of its kind is dropped, as a Waker's is; a handler waking itself, before its park, has the
// wake kept for the park. Called off l, or with a Waker of another loop's request, it panics.
func (l *Loop) Wake(w Waker, err error) {
	l.x.Wake(alias.As[serve.Waker](w), err)
}

// AfterFunc arranges for f to run on the loop after d, and returns a Timer that can stop it.
// Call it on the loop (from a handler, a Post callback or another timer); elsewhere it panics,
// since the timers are the loop's alone (Post a function that calls it). f runs outside any
// request: it must not block, and cannot park, and it may not use a request's Ctx (wake a
// handler with a Waker); a panic in it is logged and the loop goes on. A Timer belongs to the
// loop, not to a request: stop it when the request ends if f must not run after that.
func (l *Loop) AfterFunc(d time.Duration, f func()) *Timer {
	return alias.As[*Timer](l.x.AfterFunc(d, f))
}

// Stop prevents the Timer from firing and reports whether it was still armed. Call it on the
// Timer's loop (from the handler, a timer or a Post callback); elsewhere it panics.
func (t *Timer) Stop() bool {
	return t.x.Stop()
}

// Reset re-arms the Timer to fire d from now, whether or not it has fired. Call it on the
// Timer's loop; elsewhere it panics.
func (t *Timer) Reset(d time.Duration) {
	t.x.Reset(d)
}

// Wake resumes the park the Waker was taken for with err, from any goroutine: the wake is
// posted to the request's loop, and the handler goes on (or its continuation runs) at the top of
// the loop's next iteration. It reports false when the loop has stopped. A wake from the handler
// itself, before its park, is kept for the park. Code that runs on the request's loop (a Post
// callback, a timer, another request's handler or continuation there) wakes it without the
// inbox with Loop.Wake.
func (w Waker) Wake(err error) bool {
	return w.x.Wake(err)
}
