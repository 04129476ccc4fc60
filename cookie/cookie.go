// Package cookie reads and sets HTTP cookies (RFC 6265) on dwell requests, with net/http's
// Cookie type and net/http's own parsing and validation, so that a cookie behaves here exactly
// as it does in a net/http handler:
//
//	ck, err := cookie.Get(c, "session")
//	if errors.Is(err, http.ErrNoCookie) { ... }
//
//	err := cookie.Set(c, &http.Cookie{Name: "session", Value: id, Path: "/",
//		MaxAge: 3600, HttpOnly: true, Secure: true, SameSite: http.SameSiteLaxMode})
//
// A cookie is deleted by setting it again with MaxAge -1 (and the same Path and Domain).
// The functions may be called from the handler; Set also from a continuation.
package cookie

import (
	"net/http"

	"github.com/dwellhttp/dwell/core"
)

// Get returns the cookie named name that the request carries, or http.ErrNoCookie. The
// request's Cookie header fields are parsed as http.Request.Cookie parses them: pairs that are
// not valid are skipped, and a value's surrounding double quotes are removed (Quoted says
// they were there). The cookie is the caller's to keep.
func Get(c *core.Ctx, name string) (*http.Cookie, error) {
	var lines []string
	for v := range c.Bytes().HeaderValues("Cookie") {
		lines = append(lines, string(v))
	}
	if lines == nil {
		return nil, http.ErrNoCookie
	}
	r := http.Request{Header: http.Header{"Cookie": lines}}
	return r.Cookie(name)
}

// Set adds a Set-Cookie header field to the response for ck, with its attributes (Path,
// Domain, Expires, MaxAge, Secure, HttpOnly, SameSite, Partitioned), as http.SetCookie does.
// A cookie that http.Cookie.Valid refuses — an invalid name or value, a Domain that is not a
// domain name, a Path with a control byte or a semicolon, Partitioned without Secure — is not
// sent, and Set returns why. Like any header field, it has no effect once the
// response has started.
func Set(c *core.Ctx, ck *http.Cookie) error {
	if err := ck.Valid(); err != nil {
		return err
	}
	c.AddHeader("Set-Cookie", ck.String())
	return nil
}
