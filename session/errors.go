package session

import (
	"errors"
	"strconv"
)

// The errors of Load and Save, for errors.Is: the errors returned wrap one of them, with the
// cookie's name and the detail.
var (
	// ErrNoSession is Load's error for a request without the cookie (or with it empty): a
	// visitor not signed in, or whose browser has forgotten the session.
	ErrNoSession = errors.New("session: no session cookie")

	// ErrInvalid is Load's error for a cookie the Store did not seal: changed, made up, not
	// base64url, sealed under a key no longer in Options.Keys or for another cookie name — or
	// sealed, but holding JSON that does not decode into the Store's type. Treat it as no
	// session: it is what an attack looks like, and also what a key removed too early does.
	ErrInvalid = errors.New("session: invalid session cookie")

	// ErrExpired is Load's error for a cookie the Store sealed whose MaxAge has passed.
	ErrExpired = errors.New("session: session expired")

	// ErrTooLarge is Save's error for a session whose cookie would be over the 4096 bytes
	// browsers keep. Nothing is set.
	ErrTooLarge = errors.New("session: session cookie too large")
)

// A cookieError is one of the errors above with its detail: which cookie, and why.
type cookieError struct {
	kind   error  // ErrInvalid, ErrExpired or ErrTooLarge
	name   string // the cookie's
	detail string
	cause  error // what failed beneath, or nil
}

func (e *cookieError) Error() string {
	s := e.kind.Error() + ": cookie " + strconv.Quote(e.name) + ": " + e.detail
	if e.cause != nil {
		s += ": " + e.cause.Error()
	}
	return s
}

func (e *cookieError) Unwrap() []error {
	if e.cause != nil {
		return []error{e.kind, e.cause}
	}
	return []error{e.kind}
}
