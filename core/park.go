package core

import "time"

// Parking: a handler's coroutine suspends itself and the loop goes on with other work until
// something makes the handler ready again — a Resume or Waker for the user-level hooks below,
// readability for a body read, a drained queue for a writer. A ready handler is resumed only by
// its own loop, at the top of the loop, never from inside another handler.

type parkKind uint8

const (
	parkNone  parkKind = iota
	parkUser           // Suspend, SuspendFor: ended by Resume, a Waker, the deadline, or the client leaving
	parkHold           // Hold: ended only by Resume or a Waker
	parkRead           // waiting for request body bytes
	parkWrite          // waiting for the write queue to drain
	parkAfter          // detached by DetachAfter: the deadline is the awaited event
)

// Suspend parks the handler until Resume (or a Waker) wakes it, and returns the error passed
// there. It returns early with ErrClosed when the client goes away, and with ErrShutdown when a
// shutdown's grace period ends; once either has happened, Suspend returns it at once. Suspend is
// a low-level hook for packages that park (see package wait); it must be called from the
// handler itself, not from a continuation or another goroutine (ErrNotInHandler).
func (cx *Ctx) Suspend() error { return cx.suspendFor(parkUser, 0) }

// SuspendFor is Suspend with a deadline: after d it returns ErrTimeout. d <= 0 means no deadline.
func (cx *Ctx) SuspendFor(d time.Duration) error { return cx.suspendFor(parkUser, d) }

// Hold parks the handler like Suspend, but only Resume (or a Waker) ends it: a client leaving or
// a shutdown is recorded and returned once it ends, not acted on. It is for waiting on work that
// must run to its end, such as a call already running on another goroutine (wait.Do).
func (cx *Ctx) Hold() error {
	err := cx.suspendFor(parkHold, 0)
	if err == nil {
		err = cx.gone.err()
	}
	return err
}

// suspendFor parks for Suspend, SuspendFor and Hold. Its frame is on the stack of every parked
// handler, below the handler's own: it is kept small (the yield is written out here rather than
// called through suspend), since a coroutine's first 2 KiB of stack leave only about 1 KiB to
// the frames before the runtime grows it to 4 KiB.
func (cx *Ctx) suspendFor(kind parkKind, d time.Duration) error {
	l := cx.conn.l
	if l.current != cx {
		return ErrNotInHandler
	}
	if cx.gone != 0 && kind != parkHold {
		return cx.gone.err()
	}
	if d > 0 {
		l.timers.set(&cx.tm, l.now+int64(d))
	}
	cx.state = ctxParked
	cx.park = kind
	cx.woken = 0
	cx.co.yield(struct{}{})
	cx.park = parkNone
	l.timers.stop(&cx.tm)
	cx.gen++
	return cx.wakeErr()
}

// suspend yields the coroutine back to the loop until wake.
func (cx *Ctx) suspend(kind parkKind) error {
	cx.state = ctxParked
	cx.park = kind
	cx.woken = 0
	cx.co.yield(struct{}{})
	cx.park = parkNone
	return cx.wakeErr()
}

// wake makes a parked handler (or a pending continuation) ready with err.
func (cx *Ctx) wake(err error) {
	l := cx.conn.l
	switch cx.state {
	case ctxParked:
		cx.state = ctxReady
	case ctxDetached:
		cx.state = ctxDetachedReady
	default:
		return
	}
	cx.setWakeErr(err)
	l.ready = append(l.ready, cx)
}

// setWakeErr records what a wake passes to the parked handler: most are coded in a byte; another
// error (from Resume) is kept in the extra.
func (cx *Ctx) setWakeErr(err error) {
	cx.woken = codeOf(err)
	if cx.woken == errOther {
		cx.rare().wakeErr = err
	}
}

// wakeErr returns what the last wake passed.
func (cx *Ctx) wakeErr() error {
	if cx.woken == errOther {
		return cx.x.rare.wakeErr
	}
	return cx.woken.err()
}

// Resume wakes the handler parked in Suspend, SuspendFor or Hold (or the continuation pending
// after Detach); Suspend returns err. It has no effect when the handler is not parked there.
// Call it on the handler's loop — from a Post callback, a timer, or another handler of the same
// loop; from other goroutines use a Waker.
func (cx *Ctx) Resume(err error) {
	if cx.state == ctxParked && (cx.park == parkUser || cx.park == parkHold) || cx.state == ctxDetached {
		cx.wake(err)
	}
}

// A Waker wakes one particular park of a handler from any goroutine. Take it before parking;
// once that park has ended (by a Resume, a timeout, the client leaving) the Waker does nothing,
// so it can never wake a later park, or a later request reusing the Ctx.
type Waker struct {
	c   *Ctx
	l   *Loop
	gen uint32
}

// Waker returns a Waker for the handler's next (or current) Suspend, SuspendFor, Hold or
// Detach.
func (cx *Ctx) Waker() Waker { return Waker{cx, cx.conn.l, cx.gen} }

// Wake resumes the park the Waker was taken for with err, from any goroutine. It reports false
// when the loop has stopped.
func (w Waker) Wake(err error) bool {
	return w.l.inbox.post(task{w: w, err: err})
}

// Detach lets the handler return without finishing its response: the response stays open and
// wake runs later, on the loop, with c, when Resume or a Waker wakes it (with their error), when
// the client goes away (ErrClosed) or when a shutdown's grace period ends (ErrShutdown). wake
// writes the rest of the response; when it returns, the response is finished, unless wake
// called Detach again. This is the continuation style: a parked request costs its connection
// and its Ctx, not a coroutine — and since wake receives c, it can be a plain function rather
// than a closure.
//
// wake runs outside any coroutine, so it cannot park: its writes past the high-water mark queue
// up, and it cannot read the body. Borrowed values of the request end when the handler returns;
// copy what wake needs.
func (cx *Ctx) Detach(wake func(c *Ctx, err error)) { cx.detach(0, wake, false) }

// DetachFor is Detach with a deadline: after d, wake runs with ErrTimeout. d <= 0 means none.
func (cx *Ctx) DetachFor(d time.Duration, wake func(c *Ctx, err error)) {
	cx.detach(d, wake, false)
}

// DetachAfter is Detach until d has passed: then wake runs with a nil error (it runs earlier
// only for a Resume, a Waker, the client leaving or a shutdown). It is a wait on time in the
// continuation style, at no cost but the Ctx.
func (cx *Ctx) DetachAfter(d time.Duration, wake func(c *Ctx, err error)) {
	cx.detach(max(d, 1), wake, true)
}

func (cx *Ctx) detach(d time.Duration, wake func(*Ctx, error), deadlineIsSuccess bool) {
	l := cx.conn.l
	cx.detachK = wake
	cx.park = parkNone
	if deadlineIsSuccess {
		cx.park = parkAfter
	}
	if d > 0 {
		l.timers.set(&cx.tm, l.now+int64(d))
	}
}

// fire is the Ctx timer: the deadline of SuspendFor, DetachFor or DetachAfter.
func (cx *Ctx) fire() {
	switch {
	case cx.state == ctxDetached && cx.park == parkAfter:
		cx.wake(nil)
	case cx.state == ctxParked && cx.park == parkUser, cx.state == ctxDetached:
		cx.wake(ErrTimeout)
	}
}

// resumeReady runs a woken handler or continuation, then lets its connection go on.
func (cx *Ctx) resumeReady() {
	c := cx.conn
	l := c.l
	switch cx.state {
	case ctxReady:
		l.switchTo(cx)
	case ctxDetachedReady:
		cx.runContinuation()
	default:
		return
	}
	if c.state != stHandler { // the request is over: go on with the connection
		c.serve()
	}
	c.settle()
}

// runContinuation calls the pending continuation of a detached handler.
func (cx *Ctx) runContinuation() {
	l := cx.conn.l
	k := cx.detachK
	err := cx.wakeErr()
	cx.detachK = nil
	cx.park = parkNone
	cx.state = ctxRunning
	l.timers.stop(&cx.tm)
	cx.gen++
	func() {
		defer func() {
			if r := recover(); r != nil {
				cx.detachK = nil
				l.handlerPanic(cx, r)
			}
		}()
		k(cx, err)
	}()
	if cx.detachK != nil {
		cx.state = ctxDetached
		if cx.gone != 0 {
			cx.wake(cx.gone.err())
		}
		return
	}
	cx.conn.handlerDone()
}

// clientGone records that the request can no longer be answered normally (err is ErrClosed or
// ErrShutdown) and wakes the handler wherever it waits, except in Hold.
func (cx *Ctx) clientGone(err error) {
	if cx.gone == 0 {
		cx.gone = codeOf(err)
	}
	if x := cx.x; x != nil && x.rare != nil && x.rare.reqCtx != nil {
		x.rare.reqCtx.cancel(err)
	}
	if cx.state == ctxParked && cx.park != parkHold || cx.state == ctxDetached {
		cx.wake(err)
	}
}

// Post runs f on the request's loop from any goroutine; see Loop.Post.
func (cx *Ctx) Post(f func()) error { return cx.conn.l.Post(f) }

// AfterFunc arranges for f to run on the request's loop after d, and returns a Timer that can
// stop it. The Timer belongs to the loop, not the request: stop it when the request ends if f
// must not run after that.
func (cx *Ctx) AfterFunc(d time.Duration, f func()) *Timer {
	l := cx.conn.l
	t := &Timer{l: l, f: f}
	t.t.init(timerFunc)
	l.timers.set(&t.t, l.now+int64(max(d, 0)))
	return t
}
