package session

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/dwellhttp/dwell/cookie"
	"github.com/dwellhttp/dwell/core"
)

// A Store keeps sessions of type T in a sealed cookie: Save writes one, Load reads it back,
// Clear deletes it. T is encoded with encoding/json, so its exported fields (or a map) are what
// is kept. A Store is made by New at start-up and is safe for concurrent use by the handlers
// of every loop.
type Store[T any] struct {
	cd     *codec
	attrs  http.Cookie
	maxAge time.Duration
	now    func() time.Time
}

// New returns a Store for sessions of type T, or an error that says what is wrong with o and
// how to write it: no key, a key not KeySize bytes long, a cookie name, path or domain that
// browsers would refuse, a MaxAge under a second, or attributes that go against each other
// (SameSite None or a "__Secure-" or "__Host-" name with Insecure).
func New[T any](o Options) (*Store[T], error) {
	cf, err := o.check()
	if err != nil {
		return nil, err
	}
	return &Store[T]{
		cd:     newCodec(cf.keys, cf.attrs.Name),
		attrs:  cf.attrs,
		maxAge: cf.maxAge,
		now:    cf.now,
	}, nil
}

// Load returns the session the request's cookie holds. It returns the zero T and an error
// when there is none to trust: ErrNoSession without the cookie, ErrInvalid for a cookie the
// Store did not seal (or whose JSON does not fit T), ErrExpired for one past its MaxAge, each
// wrapped with the detail. Handlers usually treat every error as "not signed in"; the
// difference is for logs. Load reads the first cookie of the Store's name that the request
// carries; behind Require, it returns the session Require loaded, without opening the cookie
// again.
func (s *Store[T]) Load(c *core.Ctx) (T, error) {
	if v, ok := s.required(c); ok {
		return v, nil
	}
	ck, err := cookie.Get(c, s.attrs.Name)
	if err != nil {
		var zero T
		return zero, ErrNoSession
	}
	return s.decode(ck.Value)
}

// decode returns the session a cookie value holds, as Load does.
func (s *Store[T]) decode(value string) (T, error) {
	var v T
	if value == "" {
		return v, ErrNoSession
	}
	payload, err := s.cd.open(value, s.now())
	if err != nil {
		return v, err
	}
	if err := json.Unmarshal(payload, &v); err != nil {
		var zero T
		return zero, s.cd.invalid("it does not decode into the Store's type", err)
	}
	return v, nil
}

// Save seals v into the response's cookie, with MaxAge from now: on sign-in, with a new value
// rather than one loaded, so that a session planted before sign-in is not kept (see the
// package's notes on fixation), and whenever the session changes or is to be extended. It
// returns an error, and sets nothing, when v does not encode as JSON or the cookie would be
// over the 4096 bytes browsers keep (ErrTooLarge). Like any header field, the cookie has no
// effect once the response has started; of several Saves and Clears in one response, browsers
// apply the last.
func (s *Store[T]) Save(c *core.Ctx, v T) error {
	payload, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("session: cookie %q: the session does not encode as JSON: %w", s.attrs.Name, err)
	}
	now := s.now()
	expires := now.Add(s.maxAge)
	ck := s.cookie(s.cd.seal(payload, expires), int(s.maxAge/time.Second), expires)
	if n := len(ck.String()); n > maxCookie {
		return &cookieError{kind: ErrTooLarge, name: s.attrs.Name,
			detail: "it would be " + strconv.Itoa(n) + " bytes, over the " + strconv.Itoa(maxCookie) +
				" browsers keep; keep an id in the session and the rest on the server"}
	}
	return cookie.Set(c, ck)
}

// Clear deletes the session cookie from the visitor's browser, on sign-out: it sets the cookie
// again, empty and already expired, with the same attributes. It cannot revoke a copy of the
// cookie taken earlier, which stays valid until its MaxAge passes (see the package's notes).
func (s *Store[T]) Clear(c *core.Ctx) {
	cookie.Set(c, s.cookie("", -1, time.Unix(0, 0))) // valid: New checked the attributes
}

// cookie returns the Store's cookie with value, Max-Age and Expires.
func (s *Store[T]) cookie(value string, maxAge int, expires time.Time) *http.Cookie {
	ck := s.attrs
	ck.Value = value
	ck.MaxAge = maxAge
	ck.Expires = expires
	return &ck
}
