package serve

// Work on the loop's stack. A coroutine's stack starts at 2 KiB, of which a handler has about
// a kilobyte before the runtime doubles it; and once grown it stays grown for as long as the
// handler parks, since the runtime shrinks only stacks mostly unused, which a parked
// handler's, with every frame below its park, never is. So a handler that does something
// stack-hungry (a WebSocket handshake, a write through the output queue) and then waits for a
// long time would cost 2 KiB more per parked request for the rest of its life. onLoopStack
// runs such work on the loop's own goroutine, whose stack is large and one per loop, while the
// handler waits: two switches, a fraction of a microsecond, and no allocation — the work is a
// function and its arguments, not a closure.

// loopWorkFunc is work a handler runs on its loop's stack (Seam.OnLoopStack): f(p, b, n), whose
// result is the handler's.
type loopWorkFunc = func(p any, b []byte, n int) int

// loopWork is what a handler has asked the loop to run on its stack: at most one at a time,
// since one coroutine runs at a time.
type loopWork struct {
	f     loopWorkFunc
	p     any
	b     []byte
	n     int
	ret   int
	panic any // what f panicked with, to go on in the handler
}

// onLoopStack runs f(p, b, n) on the loop's goroutine while the handler waits, with the
// handler's hold on cx: f may use cx as the handler does, but cannot park. Anywhere but in the
// handler's coroutine (a continuation, a completion hook, the loop itself) f runs at once,
// where it is. A panic in f goes on in the handler.
func (cx *Ctx) onLoopStack(f loopWorkFunc, p any, b []byte, n int) int {
	l := cx.Loop
	if l.current != cx {
		return f(p, b, n)
	}
	// cx stays running, not parked: nothing can wake it meanwhile, and the loop, seeing work
	// when the coroutine yields (switchTo), runs it and resumes the coroutine at once. The
	// frame is kept small, fields set one by one: it is on the stack at the yield.
	w := &l.work
	w.f, w.p, w.b, w.n = f, p, b, n
	cx.co.yield(struct{}{})
	return w.done()
}

// done returns the work's result, or goes on with its panic, and lets go of what the work was
// given.
//
//go:noinline
func (w *loopWork) done() int {
	ret, v := w.ret, w.panic
	*w = loopWork{}
	if v != nil {
		panic(v)
	}
	return ret
}

// runLoopWork runs the work the handler cx has yielded for, on the loop's goroutine, and makes
// cx the running handler again.
func (l *Loop) runLoopWork(cx *Ctx) {
	w := &l.work
	f := w.f
	w.f = nil
	l.current = nil
	l.hooked = cx
	func() {
		defer func() { w.panic = recover() }()
		w.ret = f(w.p, w.b, w.n)
	}()
	l.hooked = nil
	l.current = cx
}
