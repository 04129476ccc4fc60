package middleware

import (
	"encoding/base64"
	"strings"

	"github.com/dwellhttp/dwell/core"
)

// BasicOptions configures BasicAuth: Users, or a Valid function.
type BasicOptions struct {
	// Users maps each user name to its password, both compared in constant time.
	Users map[string]string

	// Valid, when set, decides in place of Users: for passwords kept hashed, or looked up. It
	// runs in the handler, so it may park (wait.Do for bcrypt or a database).
	Valid func(c *core.Ctx, user, password string) bool

	// Realm names the protected space in the WWW-Authenticate challenge. Empty means
	// "restricted".
	Realm string

	// Error writes the 401. Nil means TextError.
	Error ErrorFunc
}

// basicUserKey is the type of the key of BasicUser's value.
type basicUserKey struct{}

// BasicAuth lets through the requests that carry an accepted user and password (RFC 7617:
// Authorization: Basic base64(user:password)) and refuses the others with 401 and a
// WWW-Authenticate: Basic challenge with charset="UTF-8". The handler reads the user with
// BasicUser. Basic credentials travel in clear: serve them over TLS only (behind a proxy that
// terminates it). A BasicOptions with neither Users nor Valid is a programming error and
// panics.
func BasicAuth(o BasicOptions) func(core.Handler) core.Handler {
	if o.Users == nil && o.Valid == nil {
		panic("dwell: BasicAuth needs Users or a Valid function")
	}
	if o.Error == nil {
		o.Error = TextError
	}
	if o.Realm == "" {
		o.Realm = "restricted"
	}
	valid := o.Valid
	if valid == nil {
		valid = usersCheck(o.Users)
	}
	ch := challenge("Basic", o.Realm) + `, charset="UTF-8"`
	return func(next core.Handler) core.Handler {
		return func(c *core.Ctx) {
			user, password, ok := basicCredentials(c.Header("Authorization"))
			if !ok || !valid(c, user, password) {
				refuse(c, o.Error, ch, "a valid user and password are required")
				return
			}
			c.SetValue(basicUserKey{}, user)
			next(c)
		}
	}
}

// BasicUser returns the user BasicAuth let through, or "".
func BasicUser(c *core.Ctx) string {
	u, _ := c.Value(basicUserKey{}).(string)
	return u
}

// usersCheck compares the credentials with every user's, so that the time taken does not tell
// which user names exist.
func usersCheck(users map[string]string) func(*core.Ctx, string, string) bool {
	type entry struct{ user, password secret }
	entries := make([]entry, 0, len(users))
	for u, p := range users {
		entries = append(entries, entry{digestOf(u), digestOf(p)})
	}
	return func(_ *core.Ctx, user, password string) bool {
		u, p := digestOf(user), digestOf(password)
		found := false
		for i := range entries {
			um := entries[i].user.equal(&u)
			pm := entries[i].password.equal(&p)
			found = found || um && pm
		}
		return found
	}
}

// basicCredentials decodes the value of an Authorization field of the Basic scheme.
func basicCredentials(v string) (user, password string, ok bool) {
	enc, ok := cutScheme(v, "Basic")
	if !ok {
		return "", "", false
	}
	dec, err := base64.StdEncoding.DecodeString(enc)
	if err != nil {
		return "", "", false
	}
	return strings.Cut(string(dec), ":")
}
