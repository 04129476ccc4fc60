package middleware

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"

	"github.com/dwellhttp/dwell/body"
	"github.com/dwellhttp/dwell/core"
)

// An ErrorFunc writes the answer of a middleware that refuses a request or answers a panic: status,
// and msg, a short sentence for the client. It runs where the middleware runs (in the handler, or
// in a core.Seam.OnPanic responder, where it must not park), after the middleware has set the
// header fields of its own (WWW-Authenticate, say).
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

// JSONRefusal writes the server's own answers (core.Options.WriteRefusal) as JSONError writes
// the middleware's, {"error": msg}, so that a JSON API answers every error in JSON: msg is
// what was wrong, the reason of a request refused before any handler ran ("missing Host
// header") or the error of one the server answered for a handler ("request body too large").
func JSONRefusal(r *core.Refusal) {
	r.SetHeader("Content-Type", "application/json")
	b, _ := json.Marshal(errorBody{RefusalMessage(r)})
	r.Write(append(b, '\n'))
}

// RefusalMessage returns what a refusal says was wrong, as a sentence for the client without
// the "dwell: " of Go's error text: for a WriteRefusal of the application's own.
func RefusalMessage(r *core.Refusal) string {
	var re *core.RequestError
	switch {
	case errors.As(r.Err, &re):
		return re.Reason
	case r.Err != nil:
		return strings.TrimPrefix(r.Err.Error(), "dwell: ")
	}
	return core.StatusText(r.Status)
}
