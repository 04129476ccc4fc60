package middleware

import "github.com/dwellhttp/dwell/core"

// BodyLimit bounds the request bodies of the routes it wraps to n bytes (core.Seam.LimitBody),
// below the server's core.Options.MaxBodyBytes: a body declared longer is refused before any of
// it is read (and without a 100 Continue), a chunked one as it crosses n. Reads then fail with
// core.ErrBodyTooLarge; a handler that answers them itself (body.ReadJSON's 413 Error, say)
// does, and one that writes nothing gets the server's 413, which goes through the other
// middleware like any response: the access log says 413 and the X-Request-Id stays. An n <= 0
// leaves the server's limit alone.
func BodyLimit(n int64) func(core.Handler) core.Handler {
	return func(next core.Handler) core.Handler {
		if n <= 0 {
			return next
		}
		return func(c *core.Ctx) {
			c.Seam().LimitBody(n)
			next(c)
		}
	}
}
