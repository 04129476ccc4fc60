package core

import "iter"

// A coro is a coroutine that runs handlers, one after another: the runtime coroutines behind
// iter.Pull, so that switching into a handler and back is a direct hand-off between two
// goroutines on the loop's thread, with no scheduler in between. A parked handler is a parked
// coroutine — a small stack and nothing else — and only its own loop resumes it.
//
// It keeps no stop function: an idle coroutine ends when resumed with no request (end), which
// spares every parked request the word and iter.Pull's stop closure.
type coro struct {
	resume func() (struct{}, bool)
	yield  func(struct{}) bool
	ctx    *Ctx
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
		// A panic ends the coroutine: recoverHandler answers for the handler, with the
		// handler's stack in the log, and the loop makes a new coroutine for the next one.
		defer co.recoverHandler()
		for {
			cx := co.ctx
			if cx == nil {
				return // end
			}
			cx.conn.l.handler(cx)
			cx.state = ctxReturned
			yield(struct{}{})
		}
	})
	return co
}

// end ends an idle coroutine: resumed with no request, it returns.
func (co *coro) end() {
	co.ctx = nil
	co.resume()
}

// recoverHandler is deferred by the coroutine: the handler it was running panicked (or called
// runtime.Goexit, treated as a return). The client gets a 500 if nothing was sent, and the loop
// goes on.
func (co *coro) recoverHandler() {
	cx := co.ctx
	if cx == nil || cx.state == ctxReturned {
		return // ended while idle
	}
	r := recover()
	cx.state = ctxReturned
	co.ctx = nil // the coroutine is over: it must not go back to the pool
	if r != nil {
		cx.detachK = nil
		cx.conn.l.handlerPanic(cx, r)
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

// switchTo runs cx's coroutine until its handler returns or parks.
func (l *Loop) switchTo(cx *Ctx) {
	cx.state = ctxRunning
	l.current = cx
	cx.co.resume()
	l.current = nil
	if cx.state != ctxReturned {
		return // parked
	}
	if co := cx.co; co.ctx != nil {
		l.putCoro(co)
	}
	cx.co = nil
	if cx.detachK != nil {
		cx.state = ctxDetached
		cx.releaseRequest() // borrowed values end when the handler returns
		if cx.gone != 0 {
			cx.wake(cx.gone.err())
		}
		return
	}
	cx.conn.handlerDone()
}
