package core

import "iter"

// A coro is a coroutine that runs handlers, one after another: the runtime coroutines behind
// iter.Pull, so that switching into a handler and back is a direct hand-off between two
// goroutines on the loop's thread, with no scheduler in between. A parked handler is a parked
// coroutine — a small stack and nothing else — and only its own loop resumes it.
type coro struct {
	resume func() (struct{}, bool)
	stop   func()
	yield  func(struct{}) bool
	ctx    *Ctx
}

// coroPoolMax bounds the idle coroutines a loop keeps: a coroutine whose stack grew (a deep
// handler) keeps that stack, so the pool does not keep coroutines without limit.
const coroPoolMax = 256

func newCoro() *coro {
	co := &coro{}
	co.resume, co.stop = iter.Pull(func(yield func(struct{}) bool) {
		co.yield = yield
		for {
			co.ctx.runHandler()
			if !yield(struct{}{}) {
				return
			}
		}
	})
	return co
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
		co.stop()
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
	l.putCoro(cx.co)
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

// runHandler runs the handler inside the coroutine. A panic is recovered here, so the coroutine
// survives to serve again: the client gets a 500 if nothing was sent, and the loop goes on.
func (cx *Ctx) runHandler() {
	defer cx.recoverHandler()
	cx.conn.l.handler(cx)
	cx.state = ctxReturned
}

func (cx *Ctx) recoverHandler() {
	if cx.state == ctxReturned {
		return
	}
	r := recover()
	cx.state = ctxReturned
	if r == nil {
		return // runtime.Goexit: treated as a return
	}
	cx.detachK = nil
	cx.conn.l.handlerPanic(cx, r)
}
