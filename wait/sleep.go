package wait

import (
	"time"

	"github.com/dwellhttp/dwell/core"
)

// Sleep parks the handler for d on its loop's timers and returns nil after it. It returns
// early with ErrClosed if the client goes away, with ErrShutdown if a shutdown's grace period
// ends, and with core.ErrDeadline if the request's own deadline (core.Ctx.SetTimeout) passes
// first; a d <= 0 returns nil at once. Unlike time.Sleep it never blocks the loop. An idle loop
// sleeps in whole milliseconds, so a very short d lasts up to a millisecond. Call it from c's
// handler.
func Sleep(c *core.Ctx, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	err := c.Suspend(d)
	if err == ErrTimeout {
		return nil
	}
	return err
}

// After is the continuation form of Sleep: the handler is detached (core.Ctx.Detach) and must
// return right after After; k runs on c's loop after d with c and nil, or early with ErrClosed,
// ErrShutdown or core.ErrDeadline, and the response is finished when k returns (unless k
// detaches again, with another After, say). A d <= 0 runs k on the next turn of the loop. k
// receives the request's Ctx so that it can be a plain function rather than a closure.
//
// k cannot park: no Sleep, Next, Do or body reads, and its writes past the high-water mark
// queue up instead of waiting. The request's values (path, query, headers) are gone when the
// handler returns: copy what k needs before calling After. Call After from c's handler.
func After(c *core.Ctx, d time.Duration, k func(c *core.Ctx, err error)) {
	c.Seam().DetachFor(d, k)
}
