package wait

import (
	"context"
	"time"

	"github.com/dwellhttp/dwell/core"
)

// An Event wakes the handlers waiting on it. Each Fire ends every wait that began before it;
// a wait that begins after it waits for the next Fire (an Event is a broadcast, not a latch).
// The zero value is ready to use. An Event must not be copied after first use.
type Event struct {
	h Sequence // how many fires so far
}

// Fire wakes every handler waiting in Wait, each on its own loop, and every goroutine waiting
// in WaitContext. It may be called from any goroutine, including handlers, and never blocks on
// the waiters: it posts one task to each loop that has waiters and has no such task pending, so
// a burst of fires costs one post per loop.
func (e *Event) Fire() {
	e.h.mu.Lock()
	e.h.seq++
	e.h.notifyLocked()
	e.h.mu.Unlock()
}

// Wait parks the handler until the next Fire, and returns nil then. It returns ErrTimeout after
// timeout (timeout <= 0 means no deadline), ErrClosed if the client goes away, ErrShutdown if
// a shutdown's grace period ends first, and core.ErrDeadline if the request's deadline passes.
// Call it from c's handler.
func (e *Event) Wait(c *core.Ctx, timeout time.Duration) error {
	return e.h.Wait(c, e.h.Value(), timeout)
}

// WaitContext is Wait for a goroutine: it blocks until the next Fire and returns nil then, or
// ctx.Err() when ctx ends first. It may be called from any goroutine but a dwell handler's,
// whose loop it would block: there, use Wait.
func (e *Event) WaitContext(ctx context.Context) error {
	return e.h.WaitContext(ctx, e.h.Value())
}
