package middleware

import (
	"time"

	"github.com/dwellhttp/dwell/core"
)

// Timeout gives each request a deadline d from its start (core.Ctx.SetTimeout). Once it passes
// before the response is complete, the request's Context is cancelled with
// context.DeadlineExceeded, its waits (wait.Sleep, Topic.Next, a continuation's) end at once
// with core.ErrDeadline, its writes fail with it, and the server answers 503 when the handler
// (or its continuation) returns if nothing had been sent, replacing what it prepared, or cuts a
// started response. It holds for continuations too, and the 503 goes through the other
// middleware (the access log says 503, the request id stays). Blocking work in wait.Call ends
// its wait at the deadline (the 503 goes out then, fn's context cancelled, its late result
// dropped); in wait.Do, which always waits for its function so that they may share variables,
// it delays the 503 until the function returns: pass it c.Context() so that it stops early, or
// use wait.Call.
// A d <= 0 sets no deadline.
func Timeout(d time.Duration) func(core.Handler) core.Handler {
	return func(next core.Handler) core.Handler {
		if d <= 0 {
			return next
		}
		return func(c *core.Ctx) {
			c.SetTimeout(d)
			next(c)
		}
	}
}
