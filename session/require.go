package session

import (
	"bytes"
	"errors"
	"net/url"
	"strconv"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/internal/syntax"
)

// RequireOptions configures Require. The zero value refuses every request without a session
// with 403, in the server's refusal format.
type RequireOptions struct {
	// SignIn is the sign-in page a browser without a session is sent to rather than refused:
	// a path ("/login") or an absolute URL. A GET or HEAD request whose Accept field lists
	// text/html — a page the browser is navigating to, not a script's fetch, which gets the
	// refusal it can read — is answered 303 See Other with SignIn as its Location. Empty means
	// no redirect: every request without a session is refused.
	SignIn string

	// Next is the query parameter added to SignIn that carries the path and query the browser
	// asked for, so that the sign-in page can send it back there: "next" makes the Location
	// "/login?next=%2Fdocs%3Fpage%3D2". Empty means none. A target that would leave the site
	// once used as a Location ("//host/...", "/\host") is left out. The sign-in page must still
	// check the value before redirecting to it — a path of its own, starting with a single
	// "/" — since anyone can link to it with another.
	Next string

	// Status is the status of a refusal. Zero means 403 Forbidden: a 401 Unauthorized must
	// carry a WWW-Authenticate challenge (RFC 9110 §15.5.2), which a session cookie has none
	// of, but a JSON API whose clients expect 401 may set it. It is a 4xx or 5xx: Require
	// panics otherwise.
	Status int
}

// Require returns a middleware that lets through only the requests with a session of s —
// one that s.Load returns without an error — and answers the others itself: no cookie, one
// that expired (ErrExpired), one that s did not seal (ErrInvalid). The handler reads the
// session with s.Load as before, which then returns what Require loaded without opening the
// cookie again. A session that is there but not enough (a role the route needs) is the
// handler's to check.
//
// A browser's page request is sent to o.SignIn, when set (see RequireOptions). Any other
// request is refused with o.Status (403) as the server refuses requests itself when the
// application gave it a format (core.Options.WriteRefusal, through core.Ctx.Refuse):
// middleware.JSONRefusal answers {"error":"sign in first"}, or "the session has expired: sign
// in again" for an expired one. Without one it is the server's plain text, "403 Forbidden: sign
// in first". The refusal's Err wraps Load's error, for errors.Is(r.Err, session.ErrExpired) in
// a WriteRefusal of the application's; its detail (which key, what failed) stays out of the
// answer.
//
// Put it on the routes that need a session (router.Group.Use), not on the sign-in page. A
// malformed o.SignIn panics, as start-up code.
func Require[T any](s *Store[T], o RequireOptions) func(core.Handler) core.Handler {
	status := o.Status
	switch {
	case status == 0:
		status = 403
	case status < 400 || status > 599:
		panic("dwell: session.Require: RequireOptions.Status " + strconv.Itoa(status) + " is not a 4xx or 5xx")
	}
	var signIn *url.URL
	if o.SignIn != "" {
		u, err := url.Parse(o.SignIn)
		if err != nil {
			panic("dwell: session.Require: RequireOptions.SignIn " + strconv.Quote(o.SignIn) + " is not a URL: " + err.Error())
		}
		signIn = u
	}
	key := requiredKey{s.cd}
	return func(next core.Handler) core.Handler {
		return func(c *core.Ctx) {
			v, err := s.Load(c)
			if err == nil {
				c.SetValue(key, v) // for the handler's Load, which then opens nothing
				next(c)
				return
			}
			if signIn != nil && navigates(c) {
				c.SetHeader("Location", signInLocation(signIn, o.Next, c.Target()))
				c.SetStatus(303)
				return
			}
			refuse(c, status, err)
		}
	}
}

// requiredKey is the request value under which Require leaves the session it loaded for the
// Store whose codec cd is: one Store's session is not another's.
type requiredKey struct{ cd *codec }

// required returns the session Require loaded for s on the request, if it did.
func (s *Store[T]) required(c *core.Ctx) (T, bool) {
	v, ok := c.Value(requiredKey{s.cd}).(T)
	return v, ok
}

// A requiredError is the Err of Require's refusals: what the client is told, and Load's error
// beneath, for errors.Is and logs.
type requiredError struct {
	msg   string
	cause error
}

func (e *requiredError) Error() string { return "dwell: " + e.msg }
func (e *requiredError) Unwrap() error { return e.cause }

// refuse answers a request without a session with status: in the server's refusal format, or
// in its plain text.
func refuse(c *core.Ctx, status int, cause error) {
	msg := "sign in first"
	if errors.Is(cause, ErrExpired) {
		msg = "the session has expired: sign in again"
	}
	if c.Refuse(status, &requiredError{msg, cause}) {
		return
	}
	c.SetHeader("Content-Type", "text/plain; charset=utf-8")
	c.SetStatus(status)
	c.WriteString(strconv.Itoa(status) + " " + core.StatusText(status) + ": " + msg + "\n")
}

// navigates reports whether the request is a browser's for a page: a GET or HEAD whose Accept
// field lists text/html as acceptable (a q-value above 0, RFC 9110 §12.4.2). Scripts' fetches
// (Accept: */*, application/json) get the refusal instead, which they can read, rather than a
// sign-in page they cannot show.
func navigates(c *core.Ctx) bool {
	if m := c.Method(); m != "GET" && m != "HEAD" {
		return false
	}
	for accept := range c.Bytes().HeaderValues("Accept") {
		for r := range bytes.SplitSeq(accept, []byte(",")) {
			media, params, _ := bytes.Cut(r, []byte(";"))
			if syntax.EqualFold(string(bytes.TrimSpace(media)), "text/html") {
				return syntax.QValue(params) > 0
			}
		}
	}
	return false
}

// signInLocation returns the sign-in page's URL, with the target the browser asked for in the
// query parameter next, when there is one and the target is a path of the site's own.
func signInLocation(signIn *url.URL, next, target string) string {
	if next == "" || !localPath(target) {
		return signIn.String()
	}
	u := *signIn
	q := u.Query()
	q.Set(next, target)
	u.RawQuery = q.Encode()
	return u.String()
}

// localPath reports whether target is an origin-form path that stays on the site when used
// as a Location: not "//host" or "/\host", which browsers read as another host.
func localPath(target string) bool {
	return len(target) > 0 && target[0] == '/' && (len(target) == 1 || target[1] != '/' && target[1] != '\\')
}
