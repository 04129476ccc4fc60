package core

// Work on the loop's stack. A coroutine's stack starts at 2 KiB, of which a handler has a few
// hundred bytes before the runtime doubles it; and once grown it stays grown for as long as
// the handler parks, since the runtime shrinks only stacks that are mostly unused, which a
// parked handler's, with every frame below its park, never is. So a handler that does
// something stack-hungry once (a WebSocket handshake) and then waits for a long time would
// cost 2 KiB more per parked request for the rest of its life. onLoopStack runs such work on
// the loop's own goroutine, whose stack is large and one per loop, while the handler waits:
// two switches, a fraction of a microsecond.

// loopWork is what a handler has asked the loop to run on its stack: at most one at a time,
// since one coroutine runs at a time.
type loopWork struct {
	f     func()
	panic any // what f panicked with, to go on in the handler
}

// onLoopStack runs f on the loop's goroutine while the handler waits, with the handler's hold
// on cx: f may use cx as the handler does, but cannot park. Anywhere but in the handler's
// coroutine (a continuation, a completion hook) f runs at once, where it is. A panic in f goes
// on in the handler.
func (cx *Ctx) onLoopStack(f func()) {
	l := cx.l
	if l.current != cx {
		f()
		return
	}
	// cx stays running, not parked: nothing can wake it meanwhile, and the loop, seeing work
	// when the coroutine yields (switchTo), runs it and resumes the coroutine at once.
	l.work.f = f
	cx.co.yield(struct{}{})
	if p := l.work.panic; p != nil {
		l.work.panic = nil
		panic(p)
	}
}

// runLoopWork runs the work the handler cx has parked for, on the loop's goroutine, and
// makes cx the running handler again.
func (l *Loop) runLoopWork(cx *Ctx) {
	f := l.work.f
	l.work.f = nil
	l.current = nil
	l.hooked = cx
	func() {
		defer func() { l.work.panic = recover() }()
		f()
	}()
	l.hooked = nil
	l.current = cx
}
