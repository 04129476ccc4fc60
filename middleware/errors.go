package middleware

import (
	"strconv"

	"github.com/dwellhttp/dwell/body"
	"github.com/dwellhttp/dwell/core"
)

// An ErrorFunc writes the answer of a middleware that refuses a request or answers a panic:
// status, and msg, a short sentence for the client. It runs where the middleware runs (in the
// handler, or in an OnPanic responder, where it must not park), after the middleware has set
// the header fields of its own (WWW-Authenticate, say).
type ErrorFunc func(c *core.Ctx, status int, msg string)

// TextError answers status with a plain-text body, "401 Unauthorized: msg", as the server's
// own error answers read.
func TextError(c *core.Ctx, status int, msg string) {
	c.SetHeader("Content-Type", "text/plain; charset=utf-8")
	c.SetStatus(status)
	c.WriteString(strconv.Itoa(status) + " " + core.StatusText(status) + ": " + msg + "\n")
}

// JSONError answers status with the JSON body {"error": msg}.
func JSONError(c *core.Ctx, status int, msg string) {
	body.WriteJSON(c, status, errorBody{msg})
}

type errorBody struct {
	Error string `json:"error"`
}
