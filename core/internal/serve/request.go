package serve

import (
	"errors"
	"iter"
)

// A request's handler, whatever the protocol that parsed it: run in a coroutine until it returns
// or parks, resumed when woken, and its exchange told when it is over (Exchange.EndRequest,
// Exchange.GoOn), which decides what follows. The coroutines come last.

// RunHandler runs the request's handler (or, with k, its continuation) until it returns or parks,
// and when it returns, goes on with the request: it waits for its continuation, or it is done.
func (l *Loop) RunHandler(cx *Ctx, k func(*Ctx, error), err error) {
	cx, returned := l.switchTo(cx, k, err)
	if !returned || cx == nil {
		return // parked, or finished in the coroutine (see Loop.chain)
	}
	if cx.detachK != nil {
		cx.State = ctxDetached
		cx.freeRequest() // the request's values end when the handler returns
		if cx.Gone != 0 {
			cx.Wake(cx.Gone.err())
		} else if l.Shutting {
			cx.WakeForShutdown()
		}
		return
	}
	cx.Exchange.EndRequest()
}

// resume runs a woken handler or continuation, then lets its exchange go on.
func (l *Loop) resume(cx *Ctx) {
	ex := cx.Exchange // the Ctx may go back to the pool in run
	l.TurnLeft = MaxPipelined
	switch cx.State {
	case ctxReady:
		l.RunHandler(cx, nil, nil)
	case ctxDetachedReady:
		k := cx.detachK
		cx.detachK = nil
		l.RunHandler(cx, k, cx.endPark())
	default:
		return
	}
	ex.GoOn()
}

// Coroutines.

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
	resume        func() (struct{}, bool)
	yield         func(struct{}) bool
	ctx           *Ctx // the request it runs, which owns it (see Ctx.owned)
	coroGoroutine      // which goroutine it is (owner.go), fixed before anyone can read it
}

// A coro is four words (a 32-byte size class), kept by every parked request: the continuation a
// coroutine is to start with is the loop's (Loop.k), and a coroutine that ended by a panic or a
// Goexit, which must not go back to the pool, is told by its ctx, which recoverHandler clears,
// rather than by a flag.

// A coroutine's frames below the handler's are on the stack of every parked request. A new
// goroutine's stack is 2 KiB, of which the runtime's guard leaves about 1.1 KiB to frames
// before it copies the stack to 4 KiB for good; so the coroutine's own frames are few and small:
// the handler is called straight from the loop in newCoro, with no wrapper function between.

// CoroPoolMax bounds the idle coroutines a loop keeps: a coroutine whose stack grew (a deep
// handler) keeps that stack, so the pool does not keep coroutines without limit.
const CoroPoolMax = 256

func newCoro() *coro {
	co := &coro{}
	co.resume, _ = iter.Pull(func(yield func(struct{}) bool) {
		co.yield = yield
		co.noteGoroutine()
		yield(struct{}{}) // back to newCoro: the coroutine's identity is known before it runs anything
		// A panic or a Goexit ends the coroutine: recoverHandler answers for the handler, with
		// the handler's stack in the log, and the loop makes a new coroutine for the next one.
		defer co.recoverHandler()
		for {
			cx := co.ctx
			if cx == nil {
				return // end
			}
			if l := cx.Loop; l.k != nil {
				k, err := l.k, l.kerr
				l.k, l.kerr = nil, nil
				k(cx, err)
			} else {
				cx.Loop.handlers[cx.via.listener()](cx)
			}
			if cx.Loop.SW.Noted() {
				cx.Loop.noteStall(cx)
			}
			if cx.detachK == nil && cx.filter() != nil {
				cx.closeFilter() // here, where its writes may still park
			}
			cx.State = ctxReturned
			if cx.Loop.chain(cx) != nil {
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
	if cx == nil || cx.State == ctxReturned {
		return // ended while idle
	}
	r := recover()
	cx.State = ctxReturned
	cx.Loop.k, cx.Loop.kerr = nil, nil
	cx.detachK = nil
	goexit := r == nil // since Go 1.21, panic(nil) recovers as a *runtime.PanicNilError
	if goexit {
		r = errGoexit
	}
	cx.Loop.handlerPanic(cx, r) // an OnPanic responder may use cx: the coroutine still owns it
	co.ctx = nil                // the coroutine is ending: switchTo does not pool it
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
	if len(l.coros) >= CoroPoolMax {
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
		l.k, l.kerr = k, err
	}
	cx.State = ctxRunning
	if k == nil {
		l.current = cx
	}
	for {
		l.running.Store(co)
		l.SW.EnterApp()
		resume(co)
		l.SW.LeaveApp()
		l.running.Store(nil)
		if l.work.f == nil {
			break
		}
		l.runLoopWork(l.current) // and back into the handler, which waited for it
	}
	last = cx
	if k == nil {
		last = l.current // chain moves it along, and clears it when it finished the requests
	}
	l.current = nil
	if last != nil && last.State != ctxReturned {
		return last, false // parked
	}
	if co.ctx != nil { // nil: the coroutine ended (recoverHandler); a live one keeps its last request
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
	ex := cx.Exchange // a running handler's exchange holds it, closed or not
	co := cx.co
	l.current = nil // from here on, nothing may park: this is the loop's work
	cx.co = nil
	ex.EndRequest()
	next := ex.StartNext()
	if next == nil {
		return nil // serve goes on from here
	}
	next.co, co.ctx = co, next
	next.State = ctxRunning
	l.current = next
	l.SW.NextApp()
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
