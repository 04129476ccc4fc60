package body

import (
	"bytes"
	"fmt"
	"strconv"

	"github.com/dwellhttp/dwell/core"
)

// An Error is a request body that ReadJSON, ReadForm or MultipartReader refused: Status is the
// response status that says why — 400 for a malformed body, 413 for one over the limit, 415
// for one that is not of the media type expected or has a content coding — and Error a message
// fit for the client, naming what is wrong and where ("JSON field \"title\": got number, want
// string (byte offset 12)"). Err is the cause, for errors.Is and errors.As: a *json.SyntaxError, a
// *json.UnmarshalTypeError, core.ErrBodyTooLarge, ..., or nil.
//
// A body that broke on the wire (the client stopped mid-body, a malformed chunked coding, a
// read timeout) is not an Error: those functions return the core's error as it is, and the
// server answers it itself (400, 408) when the handler writes nothing.
type Error struct {
	Status int    // 400, 413 or 415
	Msg    string // the message for the client, which Error returns
	Err    error  // the cause, or nil
}

// Error returns the message for the client.
func (e *Error) Error() string { return e.Msg }

// Unwrap returns the cause, so that errors.Is and errors.As see it.
func (e *Error) Unwrap() error { return e.Err }

// DefaultLimit is the bound ReadJSON and ReadForm put on a body when given none: 1 MiB.
const DefaultLimit = 1 << 20

// limitOf turns a limit as the functions of this package take it (zero: DefaultLimit, negative:
// none of their own) into one for ReadAll (zero or negative: none).
func limitOf(n int64) int64 {
	switch {
	case n == 0:
		return DefaultLimit
	case n < 0:
		return 0
	}
	return n
}

// readLimited reads the whole body under limit (as limitOf reads it), turning
// core.ErrBodyTooLarge into a 413 Error. ReadAll has already set the response to 413 with
// Connection: close for it.
func readLimited(c *core.Ctx, limit int64) ([]byte, error) {
	max := limitOf(limit)
	b, overMax, err := readAll(c, max)
	if err == core.ErrBodyTooLarge {
		msg := "request body too large" // the server's bound, which the handler may not know
		if overMax {
			msg = "request body over " + strconv.FormatInt(max, 10) + " bytes"
		}
		return nil, &Error{Status: 413, Msg: msg, Err: err}
	}
	return b, err
}

// checkUnencoded refuses a request body with a content coding (Content-Encoding: gzip, say),
// which the readers of JSON and forms do not decode: 415, with Accept-Encoding: identity in
// the response to say what would have been taken (RFC 9110 §15.5.16, §12.5.3).
func checkUnencoded(c *core.Ctx) error {
	for v := range c.Bytes().HeaderValues("Content-Encoding") {
		for coding := range bytes.SplitSeq(v, []byte(",")) {
			coding = bytes.TrimSpace(coding)
			if len(coding) > 0 && !bytes.EqualFold(coding, []byte("identity")) {
				c.SetHeader("Accept-Encoding", "identity")
				return &Error{Status: 415, Msg: fmt.Sprintf("Content-Encoding %q is not accepted; send the body unencoded", coding)}
			}
		}
	}
	return nil
}
