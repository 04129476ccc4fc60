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
// middleware (the access log says 503, the request id stays). Blocking work in wait.Do runs to
// its end, as wait.Do always does: pass c.Context() to calls that take one so they stop early.
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
