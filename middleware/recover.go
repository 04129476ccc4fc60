package middleware

import "github.com/dwellhttp/dwell/core"

// Recover answers a panic of the handler, or of its continuation, with a 500 written by answer
// (nil means TextError; JSONError answers {"error": "internal server error"}), in place of the
// server's plain-text 500. The server has already recovered the panic and logged it with its
// stack (core.Options.Logger) and closes the connection after the answer; header fields set
// before the panic that do not describe the content (X-Request-Id, CORS) stay. A response that
// had started when the panic came cannot be answered: the server cuts it short (the client
// sees no final chunk, or a reset), so that no client takes it for complete. A panic with
// core.ErrAbortHandler cuts the response without an answer or a log.
//
// Without Recover a panic is answered all the same, in plain text: Recover is for choosing
// the answer. It costs no allocation per request.
func Recover(answer ErrorFunc) func(core.Handler) core.Handler {
	if answer == nil {
		answer = TextError
	}
	respond := func(c *core.Ctx, v any) { answer(c, 500, "internal server error") }
	return func(next core.Handler) core.Handler {
		return func(c *core.Ctx) {
			c.Seam().OnPanic(respond)
			next(c)
		}
	}
}
