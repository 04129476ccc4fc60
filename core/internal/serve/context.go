package serve

import (
	"context"
	"errors"
	"sync"
	"time"
)

// requestContext is the context.Context of one request. It is made only when a handler asks for
// it (most never do), and it is never reused, so a goroutine that keeps it sees it cancelled,
// never another request's.
type requestContext struct {
	mu       sync.Mutex
	done     chan struct{}
	err      error
	values   *valueNode // the request's values (SetValue), an immutable list
	deadline time.Time  // the request's deadline (SetTimeout), or zero
}

// errRequestEnded is the cause of a request context cancelled because its request ended.
var errRequestEnded = errors.New("dwell: request ended")

// Context returns a context cancelled when the client goes away, when a shutdown's grace period
// ends, or when the request ends (the handler returns, or its continuation finishes). Its Err is
// then context.Canceled (context.DeadlineExceeded for the request's deadline, see SetTimeout).
// Its Value returns the request's values (SetValue). It may be handed to other goroutines, and
// stays valid (cancelled) after the request.
func (cx *Ctx) Context() context.Context {
	cx.check("Context")
	x := cx.rare()
	if x.reqCtx == nil {
		x.moveInlineValues()
		x.reqCtx = &requestContext{values: x.values}
		if x.deadlineAt != 0 {
			x.reqCtx.deadline = cx.Loop.Clk.Time(x.deadlineAt)
		}
		if cx.Gone != 0 {
			x.reqCtx.cancel(cx.Gone.err())
		}
	}
	return x.reqCtx
}

func (rc *requestContext) cancel(cause error) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if rc.err != nil {
		return
	}
	rc.err = cause
	if rc.done == nil {
		rc.done = closedChan
	} else {
		close(rc.done)
	}
}

var closedChan = func() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}()

func (rc *requestContext) Deadline() (time.Time, bool) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.deadline, !rc.deadline.IsZero()
}

func (rc *requestContext) setDeadline(t time.Time) {
	rc.mu.Lock()
	rc.deadline = t
	rc.mu.Unlock()
}

func (rc *requestContext) Done() <-chan struct{} {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if rc.done == nil {
		rc.done = make(chan struct{})
	}
	return rc.done
}

func (rc *requestContext) Err() error {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	switch rc.err {
	case nil:
		return nil
	case ErrDeadline:
		return context.DeadlineExceeded
	}
	return context.Canceled
}

func (rc *requestContext) Value(key any) any {
	if key == (requestContextKey{}) {
		return rc
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	v, _ := lookupValue(rc.values, key)
	return v
}
