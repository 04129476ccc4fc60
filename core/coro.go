package core

import (
	"errors"
	"iter"

	"github.com/dwellhttp/dwell/core/internal/gid"
)

// A coro is a coroutine that runs handlers and continuations, one after another: the runtime
// coroutines behind iter.Pull, so that switching into a handler and back is a direct hand-off
// between two goroutines on the loop's thread, with no scheduler in between. A parked handler
// is a parked coroutine — a small stack and nothing else — and only its own loop resumes it.
//
// Continuations run in one too, although they cannot park: a coroutine is where a panic or a
// runtime.Goexit of user code can end without taking the loop's goroutine with it.
//
// It keeps no stop function: an idle coroutine ends when resumed with no request (end), which
// spares every parked request the word and iter.Pull's stop closure.
type coro struct {
	resume func() (struct{}, bool)
	yield  func(struct{}) bool
	ctx    *Ctx              // the request it runs, which owns it (see Ctx.owned)
	k      func(*Ctx, error) // a continuation to run instead of the handler
	kerr   error             // what to pass k
	dead   bool              // ended by a panic or a Goexit: it must not go back to the pool
	g      uintptr           // its goroutine (gid.Self), fixed before anyone can read it
	goid   uint64            // its goroutine's number, to find its stack (see stall.go)
}

// A coroutine's frames below the handler's are on the stack of every parked request. A new
// goroutine's stack is 2 KiB, of which the runtime's guard leaves about 1.1 KiB to frames
// before it copies the stack to 4 KiB for good; so the coroutine's own frames are few and small:
// the handler is called straight from the loop in newCoro, with no wrapper function between.

// coroPoolMax bounds the idle coroutines a loop keeps: a coroutine whose stack grew (a deep
// handler) keeps that stack, so the pool does not keep coroutines without limit.
const coroPoolMax = 256

func newCoro() *coro {
	co := &coro{}
	co.resume, _ = iter.Pull(func(yield func(struct{}) bool) {
		co.yield = yield
		co.g, co.goid = gid.Self(), gid.Number()
		yield(struct{}{}) // back to newCoro: the coroutine's identity is known before it runs anything
		// A panic or a Goexit ends the coroutine: recoverHandler answers for the handler, with
		// the handler's stack in the log, and the loop makes a new coroutine for the next one.
		defer co.recoverHandler()
		for {
			cx := co.ctx
			if cx == nil {
				return // end
			}
			if k := co.k; k != nil {
				err := co.kerr
				co.k, co.kerr = nil, nil
				k(cx, err)
			} else {
				cx.l.handler(cx)
			}
			if cx.l.stall.Load() != nil {
				cx.l.noteStall(cx)
			}
			if cx.detachK == nil {
				cx.closeFilter() // here, where its writes may still park
			}
			cx.state = ctxReturned
			if cx.l.chain(cx) != nil {
				continue // the connection's next request, in this coroutine
			}
			yield(struct{}{})
		}
	})
	co.resume()
	return co
}

// end ends an idle coroutine: resumed with no request, it returns.
func (co *coro) end() {
	co.ctx = nil
	co.resume()
}

// errGoexit is what a handler that called runtime.Goexit is reported to have panicked with.
var errGoexit = errors.New("dwell: runtime.Goexit called by the handler")

// goexitPanic carries a coroutine's runtime.Goexit to its loop as a panic, which the loop
// recovers (resume). iter.Pull passes a Goexit of the coroutine on to the goroutine that
// resumed it — the loop's, which would stop every connection — but it passes a panic on as a
// panic, and a panic can be recovered.
type goexitPanic struct{}

// recoverHandler is deferred by the coroutine: the handler (or continuation) it was running
// panicked or called runtime.Goexit. The client gets a 500 if nothing was sent, else sees the
// response cut, and the loop goes on.
func (co *coro) recoverHandler() {
	cx := co.ctx
	if cx == nil || cx.state == ctxReturned {
		return // ended while idle
	}
	r := recover()
	cx.state = ctxReturned
	co.dead = true
	co.k, co.kerr = nil, nil
	cx.detachK = nil
	goexit := r == nil // since Go 1.21, panic(nil) recovers as a *runtime.PanicNilError
	if goexit {
		r = errGoexit
	}
	cx.l.handlerPanic(cx, r) // an OnPanic responder may use cx: the coroutine still owns it
	co.ctx = nil
	if goexit {
		panic(goexitPanic{}) // a Goexit cannot be stopped, but it can be followed by this
	}
}

func (l *Loop) getCoro() *coro {
	if n := len(l.coros); n > 0 {
		co := l.coros[n-1]
		l.coros[n-1] = nil
		l.coros = l.coros[:n-1]
		return co
	}
	return newCoro()
}

func (l *Loop) putCoro(co *coro) {
	co.ctx = nil
	if len(l.coros) >= coroPoolMax {
		co.end()
		return
	}
	l.coros = append(l.coros, co)
}

// switchTo runs cx's handler (or, with k, the continuation k(cx, err)) in a coroutine until it
// returns or parks. The coroutine may go on with the connection's next requests (see chain):
// switchTo returns the request it stopped at and whether that one's handler returned, or nil
// and true when the coroutine finished every request it ran. A continuation cannot park:
// l.current stays unset while it runs.
func (l *Loop) switchTo(cx *Ctx, k func(*Ctx, error), err error) (last *Ctx, returned bool) {
	co := cx.co
	if co == nil {
		co = l.getCoro()
		cx.co = co
		co.ctx = cx
		co.k, co.kerr = k, err
	}
	cx.state = ctxRunning
	if k == nil {
		l.current = cx
	}
	l.running.Store(co)
	resume(co)
	l.running.Store(nil)
	last = cx
	if k == nil {
		last = l.current // chain moves it along, and clears it when it finished the requests
	}
	l.current = nil
	if last != nil && last.state != ctxReturned {
		return last, false // parked
	}
	if !co.dead {
		l.putCoro(co)
	}
	if last != nil {
		last.co = nil
	}
	return last, true
}

// chain runs in the coroutine when cx's handler has returned. If the request ends simply — no
// continuation to wait for, no completion hooks to run — it finishes it there, as the loop
// would; then, if the connection has its next request complete in its input, it starts that
// one and returns its Ctx, bound to this coroutine, which runs its handler at once: pipelined
// requests cost no switch to the loop and back. It returns nil to yield to the loop, with
// l.current cleared if it finished cx.
//
// It leaves requests with completion hooks to the loop so that hooks (user code, an access log
// say) run on the loop's stack: a coroutine's stack stays as small as its handlers need, which
// is what a parked request costs.
func (l *Loop) chain(cx *Ctx) *Ctx {
	if l.current != cx || cx.detachK != nil || cx.hasDoneHooks() {
		return nil
	}
	c := cx.conn // a running handler's connection holds it, closed or not
	co := cx.co
	l.current = nil // from here on, nothing may park: this is the loop's work
	cx.co = nil
	c.endRequest()
	if c.state != stIdle || l.turnLeft <= 0 || c.outputBlocked() {
		return nil // serve goes on from here
	}
	next := c.startRequest()
	if next == nil {
		return nil
	}
	next.co, co.ctx = co, next
	next.state = ctxRunning
	l.current = next
	return next
}

// resume switches into co until it yields or ends. A goexitPanic from it is the end of a
// handler that called runtime.Goexit, already answered for: nothing more to do.
func resume(co *coro) {
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(goexitPanic); !ok {
				panic(r)
			}
		}
	}()
	co.resume()
}
