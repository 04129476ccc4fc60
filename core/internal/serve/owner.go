package serve

import (
	"errors"
	"runtime/debug"
	"sync/atomic"

	"github.com/dwellhttp/dwell/core/internal/gid"
)

// Who may use a Ctx. A Ctx is pooled: once its request has ended it serves another request, so
// a *Ctx kept past its request — by a goroutine, in a closure, in a map — would otherwise read
// and write that other request. Every method of a Ctx therefore checks first that the code
// calling it is the request's own code, running now: its handler or its continuation, in the
// coroutine the loop has switched into (coro.ctx is the request), or its completion hooks,
// which the loop runs on its own goroutine (Loop.hooked). Anything else — a goroutine the
// handler started, a Loop.Post callback or timer, another request's handler, the same
// handler's Ctx kept for later — is refused, and the refusal touches nothing of the Ctx.
//
// The check costs an atomic load and a comparison of goroutine identities (package gid), a
// few nanoseconds; gid tells every goroutine apart on every architecture, so a goroutine that
// calls a Ctx while its handler is running is refused as surely as one that calls it after.

// ErrOutsideRequest is returned (or, by the methods that return no error, panicked with,
// wrapped) when a Ctx is used by code that is not its request's own: after the request
// ended — the Ctx may by then serve another request, which such a call must never touch — or
// from a goroutine other than the handler's, or from a Loop.Post callback, a timer or another
// request's handler while it is parked. Hand blocking work to wait.Do, wake a parked handler
// with a Waker, and run code on the loop with Loop.Post; only the handler, its continuation
// and its hooks may use the Ctx itself.
//
// The calls that park the handler (Suspend, a ReadBody that would have to wait, SendFile,
// Seam.Hold, Seam.WaitBody) return it as well, wrapped with their name, when the request's own
// code makes them outside the handler's coroutine: from its continuation or a hook, which
// cannot park. That refusal is neither counted nor logged, since a package whose calls park
// when they can meets it as a matter of course (Seam.MayPark says beforehand which it will be).
var ErrOutsideRequest = errors.New("dwell: Ctx used outside its request (after the request ended, or by code that is not its handler's)")

// An outsideError is ErrOutsideRequest with the call that was refused.
type outsideError struct{ op string }

func (e *outsideError) Error() string {
	return "dwell: Ctx." + e.op + " called outside its request: after the request ended, or by code " +
		"that is not its handler's (another goroutine, a Post callback or timer, another request); " +
		"use wait.Do for blocking work and a Waker or Loop.Post to come back (see core.Ctx)"
}

func (e *outsideError) Unwrap() error { return ErrOutsideRequest }

// owned reports whether the code running is cx's request's own.
func (cx *Ctx) owned() bool {
	l := cx.Loop
	return l == nil || l.runs(cx, gid.Self()) // no loop made cx (a test's zero value): nothing to protect
}

// runs reports whether the code running, on goroutine me, is cx's request's own. It reads only
// what cannot change under a goroutine that is not the owner: the loop's running coroutine
// (atomically), that coroutine's goroutine (fixed before the coroutine is ever published) and,
// once the caller is known to be the owner, what the owner itself wrote. It is small enough to
// inline, so that a check costs one call, gid.Self's.
func (l *Loop) runs(cx *Ctx, me uintptr) bool {
	if co := l.running.Load(); co != nil {
		return co.g == me && co.ctx == cx
	}
	return me == l.Goroutine && l.hooked == cx
}

// check panics unless the code running owns cx: the first line of the methods that return no
// error. It is a call of its own, so that the methods stay small enough to inline.
func (cx *Ctx) check(op string) {
	if l := cx.Loop; l != nil && !l.runs(cx, gid.Self()) {
		cx.misuse(op)
	}
}

// misuse reports a call of cx's method op from code that does not own it, and panics with the
// error: for the methods that return none.
func (cx *Ctx) misuse(op string) {
	panic(cx.misused(op))
}

// misused reports a call of cx's method op from code that does not own it, and returns the
// error for the caller. It touches nothing of cx but its loop, which never changes.
func (cx *Ctx) misused(op string) error {
	err := &outsideError{op}
	cx.Loop.srv.reportMisuse(cx.Loop, err)
	return err
}

// reportMisuse counts a refused call and logs the first of the server's, with the stack of the
// code that made it: where the Ctx was kept.
func (s *Server) reportMisuse(l *Loop, err error) {
	s.Misuses.Add(1)
	if s.misuseLogged.CompareAndSwap(false, true) {
		l.Log.Error("dwell: Ctx used outside its request (logged once per server)", "err", err,
			"stack", string(debug.Stack()))
	}
}

// OnLoop reports whether the code running is l's: its goroutine, or the coroutine it has
// switched into. It diagnoses misuse and nothing else: what code does never depends on where it
// runs, which its type says (a Conn and a Ctx are the loop's, a Remote and a Waker any
// goroutine's), so this file is the only one that tells goroutines apart.
func (l *Loop) OnLoop() bool {
	me := gid.Self()
	if co := l.running.Load(); co != nil {
		return co.g == me
	}
	return me == l.Goroutine
}

// A loopGoroutine is which goroutine is a loop's own: Goroutine, set as the loop starts, and self, the
// same while the loop runs and 0 before and after, which other goroutines read
// (mustBeOffLoop). The goroutines are told apart here alone.
type loopGoroutine struct {
	Goroutine uintptr
	self      atomic.Uintptr
}

// A coroGoroutine is which goroutine a coroutine is (noteGoroutine).
type coroGoroutine struct{ g uintptr }

// noteGoroutine records the loop's goroutine, as the loop starts: for onLoop, and atomically
// for mustBeOffLoop, whose callers may run before the loop has started.
func (l *Loop) noteGoroutine() {
	l.Goroutine = gid.Self()
	l.self.Store(l.Goroutine)
}

// forgetGoroutine clears the atomic record as the loop's goroutine ends: the runtime reuses the
// goroutine's identity for goroutines started later, which must not be taken for the loop.
func (l *Loop) forgetGoroutine() { l.self.Store(0) }

// noteGoroutine records the coroutine's goroutine, from inside it, before it is ever published
// in Loop.running.
func (co *coro) noteGoroutine() { co.g = gid.Self() }

// mustBeOnLoop panics unless the code running is l's, for the calls that change what only the
// loop may touch (its timers).
func (l *Loop) mustBeOnLoop(op string) {
	if !l.OnLoop() {
		panic(l.offLoopError(op))
	}
}

// mustBeOffLoop panics if the code running is on loop l, for the calls that are goroutines'
// alone: those that wait for l (Server.Stats, a Remote's Do and WaitDrained), which on l would
// wait for themselves, and a Remote's Post, whose caller on l has the Conn itself. why says
// what to do instead. It reads the loop's goroutine from its atomic record (self), since the
// caller may run before the loop has started or after it has ended; a running coroutine's
// identity (coro.g) is fixed before the coroutine is published in l.running. It allocates
// nothing, for a Remote's every call.
func (l *Loop) mustBeOffLoop(op, why string) {
	me, on := gid.Self(), false
	if co := l.running.Load(); co != nil {
		on = co.g == me
	} else {
		on = l.self.Load() == me
	}
	if on {
		panic("dwell: " + op + " called on a loop: " + why)
	}
}

// alive reports whether the Conn's connection is still open, and panics off its loop.
func (hc *Conn) alive(op string) bool {
	if !hc.base().Loop.OnLoop() {
		hc.offLoop(op)
	}
	return !hc.Is(hcClosed)
}

// MustBeOnLoop panics, naming op, unless the code running is the connection's loop's: a handler
// or continuation of its loop, a Protocol's call, a Post callback or timer there. A protocol
// built on the Conn calls it first in its own methods that are the loop's, so that a goroutine
// calling one is told which, and what to use instead (elsewhere, such as "goroutines use
// Conn.Remote"; "" for nothing), before anything is touched. It costs a few nanoseconds.
func (hc *Conn) MustBeOnLoop(op, elsewhere string) {
	if l := hc.base().Loop; !l.OnLoop() {
		l.offLoopPanic(op, elsewhere)
	}
}

// offLoopPanic panics for a call of op off l, saying what to use elsewhere. It is a call of its
// own so that MustBeOnLoop, on every call of a protocol's methods, stays small.
//
//go:noinline
func (l *Loop) offLoopPanic(op, elsewhere string) {
	msg := l.offLoopError(op)
	if elsewhere != "" {
		msg += "; " + elsewhere
	}
	panic(msg)
}

// offLoop panics for a call of op off the Conn's loop. The panic's message is built here, not
// in alive, which every call of a Conn's methods makes: a concatenation there costs a call
// and, in a handler's coroutine, enough stack to make the runtime grow it.
//
//go:noinline
func (hc *Conn) offLoop(op string) { panic(hc.base().Loop.offLoopError("Conn." + op)) }

// offLoopError is what a call of op off its loop panics with.
func (l *Loop) offLoopError(op string) string {
	return "dwell: " + op + " called off its loop: call it from a handler, a continuation, a Post callback or a timer of that loop"
}
