package middleware

import "github.com/dwellhttp/dwell/core"

// BearerOptions configures BearerAuth: a Token, or a Valid function.
type BearerOptions struct {
	// Token is the token accepted (Authorization: Bearer TOKEN), compared in constant time.
	Token string

	// Valid, when set, decides in place of Token: for several tokens, or tokens looked up. It
	// runs in the handler, so it may park (wait.Do for a database), and may hand the handler
	// what it learnt with c.SetValue (the user, the scopes). A comparison of secrets in it
	// should take constant time (crypto/subtle).
	Valid func(c *core.Ctx, token string) bool

	// Realm names the protected space in the WWW-Authenticate challenge. Empty means none.
	Realm string

	// Error writes the 401. Nil means TextError.
	Error ErrorFunc
}

// BearerAuth lets through the requests that carry an accepted bearer token (RFC 6750:
// Authorization: Bearer TOKEN, the scheme in any case) and refuses the others with 401 and a
// WWW-Authenticate: Bearer challenge — with error="invalid_token" when a token was given but
// refused. Put it on the routes or groups to protect, behind CORS so that preflights, which
// carry no credentials, are answered. A BearerOptions with neither Token nor Valid is a
// programming error and panics: it would refuse everything.
func BearerAuth(o BearerOptions) func(core.Handler) core.Handler {
	if o.Token == "" && o.Valid == nil {
		panic("dwell: BearerAuth needs a Token or a Valid function")
	}
	if o.Error == nil {
		o.Error = TextError
	}
	want := digestOf(o.Token)
	valid := o.Valid
	if valid == nil {
		valid = func(_ *core.Ctx, token string) bool {
			d := digestOf(token)
			return want.equal(&d)
		}
	}
	missing := challenge("Bearer", o.Realm)
	invalid := missing + `, error="invalid_token"`
	if o.Realm == "" {
		invalid = `Bearer error="invalid_token"`
	}
	return func(next core.Handler) core.Handler {
		return func(c *core.Ctx) {
			token, ok := cutScheme(c.Header("Authorization"), "Bearer")
			switch {
			case !ok || token == "":
				refuse(c, o.Error, missing, "a bearer token is required")
			case !valid(c, token):
				refuse(c, o.Error, invalid, "the bearer token is not valid")
			default:
				next(c)
			}
		}
	}
}
