package wait

import (
	"errors"
	"fmt"
	"runtime/debug"
	"sync/atomic"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/internal/workers"
)

// DefaultWorkers is how many goroutines the default pool (the one Do uses) may run at once,
// unless SetWorkers changes it. Blocking work is mostly waiting, so the bound is well above the
// number of processors; it is there so that a flood of requests queues instead of starting a
// goroutine each.
const DefaultWorkers = 256

// A Pool runs blocking calls for handlers on a bounded set of goroutines. Workers start when
// calls arrive, at most the pool's size at once; calls beyond that wait in order; a worker that
// finds nothing queued ends, so an idle pool holds no goroutine. Its methods may be called from
// any goroutine, except Do, which must be called from a handler.
type Pool struct {
	workers *workers.Pool
}

// NewPool returns a pool of at most workers goroutines; workers < 1 means DefaultWorkers.
func NewPool(n int) *Pool {
	if n < 1 {
		n = DefaultWorkers
	}
	return &Pool{workers: workers.New(n, 0)}
}

// SetWorkers changes the pool's size; n < 1 means DefaultWorkers. Calls already running finish;
// when the size shrinks, workers over it end as their call returns.
func (p *Pool) SetWorkers(n int) {
	if n < 1 {
		n = DefaultWorkers
	}
	p.workers.SetSize(n)
}

// defaultPool is the pool behind Do and SetWorkers.
var defaultPool = NewPool(DefaultWorkers)

// SetWorkers changes the size of the default pool, the one Do uses; n < 1 means DefaultWorkers.
func SetWorkers(n int) { defaultPool.SetWorkers(n) }

// Do runs fn on the default pool and parks the handler until fn returns; see Pool.Do.
func Do(c *core.Ctx, fn func()) error { return defaultPool.Do(c, fn) }

// Do runs fn on one of the pool's goroutines and parks the handler until fn has returned (for a
// call with a result, CallOn returns it, and does not wait past the request's end), so that a
// blocking call (a file system or database call, a slow library) stalls neither the
// handler's loop nor its other connections. fn always runs to its end before the handler goes
// on: Do then returns ErrClosed if the client went away meanwhile, ErrShutdown if a shutdown's
// grace period ended, core.ErrDeadline if the request's deadline (core.Ctx.SetTimeout) passed,
// else nil. When the pool is busy, fn waits its turn in order.
//
// fn runs on another goroutine: it must not touch c, nor anything else its loop owns; hand its
// results back through variables the handler reads after Do returns. A call of c's methods from
// fn is refused as any use of a Ctx off its request's own code is (core.ErrOutsideRequest: a
// panic from most methods, which Do raises again in the handler). A panic in fn is recovered
// on the worker and raised again in the handler (which then answers 500, as for any panic); a
// runtime.Goexit in fn ends only its worker, and Do returns ErrGoexit.
// Call Do from c's handler: from its continuation, and from code that is not the request's own,
// it returns core.ErrOutsideRequest (naming the refused call), without running fn.
func (p *Pool) Do(c *core.Ctx, fn func()) error {
	if err := c.Seam().CheckCaller("wait.Do"); err != nil {
		return err
	}
	j := &doJob{p: p, fn: fn, w: c.Waker()}
	// The job is handed to the pool from the loop, after Hold has parked the handler: only then
	// is it known that Do was called from the handler, and fn must not run for a Do that fails.
	if err := c.Seam().Loop().Post(j.start); err != nil {
		return err
	}
	c.Seam().SetWorking(true) // Server.Stats counts the wait as Working
	err := c.Seam().Hold()
	c.Seam().SetWorking(false)
	if errors.Is(err, core.ErrOutsideRequest) { // from a continuation: it never parked
		j.claim.Store(jobDropped) // nor will start hand it to the pool
		return err
	}
	if pe, ok := err.(*panicError); ok {
		panic(pe)
	}
	return err
}

// A doJob is one call waiting for or running on a worker.
type doJob struct {
	p     *Pool
	fn    func()
	w     core.Waker
	claim atomic.Int32 // jobWaiting, then jobTaken by a worker or jobDropped
}

// A job's claim: a worker takes it, or it is dropped — by CallOn, no longer waiting for it, or
// by a Do or CallOn that failed before parking — whichever is first.
const (
	jobWaiting = iota
	jobTaken
	jobDropped
)

// start runs on the handler's loop, once the handler has parked (or Do has failed).
func (j *doJob) start() {
	if !j.Dropped() {
		j.p.workers.Start(j)
	}
}

// drop gives the job up unless a worker has taken it: fn will not run, and the pool forgets it.
func (j *doJob) drop() {
	if j.claim.CompareAndSwap(jobWaiting, jobDropped) {
		j.p.workers.Drop()
	}
}

// Dropped reports whether the job was given up before a worker took it.
func (j *doJob) Dropped() bool { return j.claim.Load() == jobDropped }

// Run calls fn on a worker and wakes the handler, passing on a panic as an error to raise there,
// and a runtime.Goexit (which ends the worker; another takes its place) as ErrGoexit. A job
// dropped meanwhile does nothing: no one waits for it.
func (j *doJob) Run() {
	if !j.claim.CompareAndSwap(jobWaiting, jobTaken) {
		return
	}
	returned := false
	defer func() {
		if returned {
			return
		}
		var err error = ErrGoexit
		if r := recover(); r != nil {
			err = &panicError{val: r, stack: debug.Stack()}
		}
		j.w.Wake(err)
	}()
	j.fn()
	returned = true
	j.w.Wake(nil)
}

// A panicError carries a panic in a pooled call back to the handler that made it.
type panicError struct {
	val   any
	stack []byte
}

func (e *panicError) Error() string {
	return fmt.Sprintf("dwell: panic in wait.Do: %v\n\nworker stack:\n%s", e.val, e.stack)
}
