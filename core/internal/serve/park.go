package serve

import "time"

// Parking: a handler's coroutine suspends itself and the loop goes on with other work until
// something makes the handler ready again — a Waker for the hooks below, readability
// for a body read, a drained queue for a writer. A ready handler is resumed only by its own
// loop, at the top of the loop, never from inside another handler.
//
// Suspend, Hold and Detach are what packages that park are built on (package wait is);
// handlers mostly use those packages.

type parkKind uint8

// parkFlags say how the request's waits meet a shutdown (WakeOnShutdown).
type parkFlags uint8

const (
	parkShutdownWake parkFlags = 1 << iota // parks end as soon as a shutdown begins
	parkShutdownTold                       // a park ended with ErrShutdown for the notice
	parkWorking                            // the park waits for work on another goroutine (SetWorking; Stats: Working)
)

const (
	parkNone  parkKind = iota
	parkUser           // Suspend: ended by a Waker, the deadline, or the client leaving
	parkHold           // Hold: ended only by a Waker
	ParkRead           // waiting for request body bytes
	ParkWrite          // waiting for the write queue to drain
	parkAfter          // detached until a time (DetachFor): the deadline is the event
	ParkBody           // WaitBody: ended by a Waker, body bytes, or the client leaving
)

// Suspend parks the handler until a Waker wakes it, and returns the error passed there; after
// timeout (if > 0; 0 is none) it returns ErrTimeout. It returns early with ErrClosed when the
// client goes away, with ErrShutdown when a shutdown's grace period ends (or, after
// Seam.WakeOnShutdown, as soon as a shutdown begins), and with ErrDeadline when the request's
// own deadline (SetTimeout) passes; once the client has gone, Suspend returns that at once.
// (Seam.Hold is the park none of these end, for work that must run to its end.) It must be
// called from the handler itself: elsewhere (a continuation, a callback, another goroutine) it
// returns ErrOutsideRequest.
func (cx *Ctx) Suspend(timeout time.Duration) error {
	if !cx.owned() {
		return cx.misused("Suspend")
	}
	return cx.parkUntil(parkUser, timeout)
}

// Hold parks the handler like Ctx.Suspend, but only a wake ends it (a Waker's, or the wake of a
// package built on core, such as wait's, for the park it made): a client leaving, a shutdown
// or the request's deadline is recorded and returned once it ends, not acted on. It is for
// waiting on work that must run to its end, such as a call already running on another
// goroutine (wait.Do).
func (s Seam) Hold() error {
	cx := s.cx
	if !cx.owned() {
		return cx.misused("Seam().Hold")
	}
	err := cx.parkUntil(parkHold, 0)
	if err == nil {
		err = cx.Gone.err()
	}
	return err
}

// parkUntil parks for Suspend and Hold. Its frame is on the stack of every parked handler,
// below the handler's own: it is kept small (the yield is written out here rather than called
// through ParkOnConn), since a coroutine's first 2 KiB of stack leave only about 1 KiB to the
// frames before the runtime grows it to 4 KiB.
func (cx *Ctx) parkUntil(kind parkKind, d time.Duration) error {
	l := cx.Loop
	if l.current != cx {
		return parkRefusal(kind)
	}
	if kind != parkHold {
		if cx.Gone != 0 {
			return cx.Gone.err()
		}
		if cx.parkf&parkShutdownWake != 0 && l.Shutting {
			cx.parkf |= parkShutdownTold
			return ErrShutdown
		}
	}
	if d > 0 {
		l.Timers.Set(&cx.tm, l.Clk.Read()+int64(d))
	}
	cx.State = ctxParked
	cx.park = kind
	cx.woken = 0
	if l.SW.Noted() {
		l.noteStall(cx)
	}
	cx.co.yield(struct{}{})
	return cx.endPark()
}

// endPark ends a park of Suspend, Hold or Detach once it is woken: its timer goes, the Wakers
// taken for it are spent, and it returns what the wake passed.
func (cx *Ctx) endPark() error {
	cx.park = parkNone
	cx.Loop.Timers.Stop(&cx.tm)
	cx.gen++
	return cx.wakeErr()
}

// ParkOnConn yields the coroutine back to the loop until wake, for the server's own parks (body
// reads, writes to a slow client).
func (cx *Ctx) ParkOnConn(kind parkKind) error {
	cx.State = ctxParked
	cx.park = kind
	cx.woken = 0
	if cx.Loop.SW.Noted() {
		cx.Loop.noteStall(cx)
	}
	cx.co.yield(struct{}{})
	cx.park = parkNone
	return cx.wakeErr()
}

// InHandler reports whether the code running is cx's handler, in its coroutine: the only place
// a request may park.
func (cx *Ctx) InHandler() bool { return cx.Loop.current == cx }

// ParkedOn reports whether the handler is parked in a wait of kind k.
func (cx *Ctx) ParkedOn(k parkKind) bool { return cx.State == ctxParked && cx.park == k }

// wake makes a parked handler (or a pending continuation) ready with err.
func (cx *Ctx) Wake(err error) {
	switch cx.State {
	case ctxParked:
		cx.State = ctxReady
	case ctxDetached:
		cx.State = ctxDetachedReady
	default:
		return
	}
	cx.setWakeErr(err)
	cx.Loop.ready = append(cx.Loop.ready, cx)
}

// setWakeErr records what a wake passes to the parked handler: most are coded in a byte; another
// error (from a Waker) is kept in the extra.
func (cx *Ctx) setWakeErr(err error) {
	cx.woken = codeOf(err)
	if cx.woken == errOther {
		cx.rare().wakeErr = err
	}
}

// wakeErr returns what the last wake passed.
func (cx *Ctx) wakeErr() error {
	if cx.woken == errOther {
		return cx.Extra.Rare.wakeErr
	}
	return cx.woken.err()
}

// Resume wakes the handler parked in Suspend or Hold (or the continuation pending after
// Detach); Suspend returns err. It has no effect when the handler is not parked there. It is
// for a Waker, once the park is known to be the one the Waker was taken for.
func (cx *Ctx) Resume(err error) {
	if cx.ParkedOn(parkUser) || cx.ParkedOn(parkHold) || cx.ParkedOn(ParkBody) || cx.State == ctxDetached {
		cx.Wake(err)
	}
}

// A Waker wakes one particular park of a handler — its Suspend, Seam.Hold or Detach — from any
// goroutine, a Loop.Post callback and a timer included: it is the one way to wake a handler.
// Take it before parking; once that park has ended (by a wake, a timeout, the client leaving)
// the Waker does nothing, so it can never wake a later park, or a later request reusing the
// Ctx. Take it right before the park it is for, with nothing that waits in between: a wake
// that reaches the loop while the handler waits for something else (its body, room to write)
// finds no park of its kind and is dropped, and the park that follows waits for its timeout.
type Waker struct {
	c   *Ctx
	gen uint32
}

// Parked reports whether the request's handler is parked or detached: neither running, nor
// returned, nor yet to start.
func (cx *Ctx) Parked() bool {
	return cx.State != ctxRunning && cx.State != CtxIdle && cx.State != ctxReturned
}

// Waker returns a Waker for the handler's next (or current) Suspend, Seam.Hold or Detach.
func (cx *Ctx) Waker() Waker {
	cx.check("Waker")
	return Waker{cx, cx.gen}
}

// Wake resumes the park the Waker was taken for with err, from any goroutine: the wake is
// posted to the request's loop, and the handler goes on (or its continuation runs) at the top of
// the loop's next iteration. It reports false when the loop has stopped. A wake from the handler
// itself, before its park, is kept for the park. Code that runs on the request's loop (a Post
// callback, a timer, another request's handler or continuation there) wakes it without the
// inbox with Loop.Wake.
func (w Waker) Wake(err error) bool {
	return w.c.Loop.inbox.Post(task{w: w, err: err}) // a Ctx's loop never changes: reading it races nothing
}

// Wake resumes the park w was taken for with err, at once: the loop-side form of Waker.Wake,
// for code that runs on l — a Post callback, a timer, a handler or continuation of l's — which
// wakes a request of its own loop without the inbox's lock and wake-up. The woken handler runs
// at the top of the loop's next iteration, never inside the caller. A wake that finds no park
// of its kind is dropped, as a Waker's is; a handler waking itself, before its park, has the
// wake kept for the park. Called off l, or with a Waker of another loop's request, it panics.
func (l *Loop) Wake(w Waker, err error) {
	cx := w.c
	if cx.Loop != l {
		panic("dwell: Loop.Wake with a Waker of another loop's request: use Waker.Wake")
	}
	l.mustBeOnLoop("Loop.Wake")
	if l.current == cx {
		l.inbox.Post(task{w: w, err: err}) // its own handler, not parked yet: kept for the park
		return
	}
	if cx.gen == w.gen && cx.Active() {
		cx.Resume(err)
	}
}

// Detach lets the handler return without finishing its response: the response stays open and
// k runs later, on the loop, with c, when a Waker wakes it (with its error), after
// timeout (if > 0) with ErrTimeout, when the client goes away (ErrClosed), when a shutdown's
// grace period ends (ErrShutdown; or as soon as one begins, after Seam.WakeOnShutdown) or when the
// request's deadline passes (ErrDeadline). k writes the rest of the response; when it returns,
// the response is finished, unless k called Detach again. This is the continuation style: a
// parked request costs its connection and its Ctx, not a coroutine — and since k receives c,
// it can be a plain function rather than a closure.
//
// Call Detach from the handler just before it returns, or from k to wait again. k cannot park:
// its writes past the high-water mark queue up, and it cannot read the body. The request's
// values are gone in k (see Ctx); copy what it needs before the handler returns.
func (cx *Ctx) Detach(timeout time.Duration, k func(c *Ctx, err error)) {
	cx.check("Detach")
	cx.detach(timeout, k, false)
}

func (cx *Ctx) detach(d time.Duration, k func(*Ctx, error), deadlineIsSuccess bool) {
	l := cx.Loop
	cx.detachK = k
	cx.park = parkNone
	if deadlineIsSuccess {
		cx.park = parkAfter
	}
	if d > 0 {
		l.Timers.Set(&cx.tm, l.Clk.Read()+int64(d))
	}
}

// WakeOnShutdown makes the request's waits end with ErrShutdown as soon as a shutdown begins,
// rather than when its grace period ends: for a long poll or an event stream, which can always
// answer "nothing yet", so that its client gets that answer at once and reconnects elsewhere. The
// response can still be written; a handler that writes nothing gets a 503. It applies to Suspend
// and Detach (and so to the waits of package wait built on them), not to Hold, body reads or
// writes. Topic.Next calls it.
func (s Seam) WakeOnShutdown() {
	cx := s.cx
	cx.check("Seam().WakeOnShutdown")
	cx.parkf |= parkShutdownWake
	if cx.Loop.Shutting && cx.State == ctxDetached {
		cx.WakeForShutdown()
	}
}

// WakeForShutdown is the shutdown notice: called on every active request when a shutdown
// begins. A handler told, that then writes nothing, gets a 503 (serverAnswer).
func (cx *Ctx) WakeForShutdown() {
	if cx.parkf&parkShutdownWake != 0 && (cx.ParkedOn(parkUser) || cx.State == ctxDetached) {
		cx.parkf |= parkShutdownTold
		cx.Wake(ErrShutdown)
	}
}

// onTimeout is the Ctx timer: the deadline of Suspend or Detach.
func (cx *Ctx) onTimeout() {
	switch {
	case cx.State == ctxDetached && cx.park == parkAfter:
		cx.Wake(nil)
	case cx.ParkedOn(parkUser), cx.State == ctxDetached:
		cx.Wake(ErrTimeout)
	}
}

// EndGrace tells the request that a shutdown's grace period has ended: its Context is
// cancelled and its waits end with ErrShutdown (Seam.Hold's only once it is resumed); when the
// handler returns without having answered, the server answers 503.
func (cx *Ctx) EndGrace() { cx.clientGone(ErrShutdown) }

// clientGone records that the request can no longer be answered normally (err is ErrClosed,
// ErrShutdown, or ErrDeadline for the request's deadline) and wakes the handler wherever it
// waits, except in Hold.
func (cx *Ctx) clientGone(err error) {
	if cx.Gone == 0 {
		cx.Gone = codeOf(err)
	}
	if x := cx.Extra; x != nil && x.Rare != nil && x.Rare.reqCtx != nil {
		x.Rare.reqCtx.cancel(err)
	}
	if cx.State == ctxParked && cx.park != parkHold || cx.State == ctxDetached {
		cx.Wake(err)
	}
}

// SetTimeout gives the request a deadline d from now (d <= 0 removes it). When it passes
// before the response is complete, the request ends as if its time were up: its Context is
// cancelled (with context.DeadlineExceeded), its waits end with ErrDeadline (Seam.Hold's only once
// it is resumed) and its writes fail with ErrDeadline; if no response had started, the server
// answers 503 when the handler returns, and if one had, the connection closes to cut it.
func (cx *Ctx) SetTimeout(d time.Duration) {
	cx.check("SetTimeout")
	r := cx.rare()
	if r.deadline != nil {
		r.deadline.stop()
	}
	if d <= 0 {
		r.deadlineAt = 0
		if r.reqCtx != nil {
			r.reqCtx.setDeadline(time.Time{})
		}
		return
	}
	if r.deadline == nil {
		r.deadline = &Timer{l: cx.Loop, f: func() { cx.clientGone(ErrDeadline) }}
		r.deadline.t.Init(timerFunc)
	}
	r.deadline.reset(d)
	r.deadlineAt = cx.Loop.Clk.Now + int64(d) // reset has just read the clock
	if r.reqCtx != nil {
		r.reqCtx.setDeadline(cx.Loop.Clk.Time(r.deadlineAt))
	}
}
