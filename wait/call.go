package wait

import (
	"context"

	"github.com/dwellhttp/dwell/core"
)

// Call runs fn on the default pool and parks the handler until fn returns its value and error,
// which Call returns; see CallOn.
func Call[T any](c *core.Ctx, fn func(ctx context.Context) (T, error)) (T, error) {
	return CallOn(defaultPool, c, fn)
}

// CallOn runs fn on p's goroutines, as Pool.Do does, with the request's context, and returns
// what fn returned: the form of Do for a database query or any call with a result, which needs
// no variables shared with fn.
//
// Unlike Do, CallOn does not wait for fn when the request ends first: when the client leaves, a
// shutdown's grace period ends or the request's deadline passes (core.Ctx.SetTimeout,
// middleware.Timeout), it returns at once the zero T and core.ErrClosed, core.ErrShutdown or
// core.ErrDeadline — so that a deadline bounds the request even when fn is slow — while fn's
// context is cancelled (it should return soon) and what fn returns later is dropped. A call still
// waiting for a worker then never runs fn, and the pool's queue lets go of it, so that the calls
// of clients that left cost the pool neither work nor memory: one that resets connections or
// streams cannot queue work for nothing while the pool is busy. Since fn may
// outlive the handler, it must not use what the request lends until the handler returns (the
// []byte of c.Bytes()): the strings dwell hands out are the handler's to keep and safe. fn must
// not touch c (refused: see Pool.Do); a panic in fn is raised again in the handler, and a
// runtime.Goexit in fn makes CallOn return ErrGoexit.
func CallOn[T any](p *Pool, c *core.Ctx, fn func(ctx context.Context) (T, error)) (T, error) {
	var zero T
	if err := c.Seam().CheckCaller("wait.Call"); err != nil {
		return zero, err
	}
	// The result is written on the worker and read by the handler only after the worker's
	// wake, which happens after the write; a handler that left early never reads it.
	res := new(callResult[T])
	ctx := c.Context()
	j := &doJob{p: p, fn: func() {
		if ctx.Err() != nil {
			return // the request ended and CallOn is about to drop the call: no one waits for fn
		}
		res.v, res.err = fn(ctx)
	}, w: c.Waker()}
	if err := c.Seam().Loop().Post(j.start); err != nil {
		return zero, err
	}
	c.Seam().SetWorking(true) // Server.Stats counts the wait as Working
	err := c.Suspend(0)
	c.Seam().SetWorking(false)
	switch e := err.(type) {
	case nil:
		return res.v, res.err
	case *panicError:
		panic(e)
	}
	// Unless a worker has taken it, fn never runs (a call from a continuation, which never
	// parked, included), and the pool holds the call no more.
	j.drop()
	return zero, err
}

type callResult[T any] struct {
	v   T
	err error
}
