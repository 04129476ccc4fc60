package main

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"os"
	"path/filepath"

	"github.com/dwellhttp/dwell/body"
	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/middleware"
	"github.com/dwellhttp/dwell/session"
)

// A browser signs in once and writes with its session cookie, where a script or a tool sends
// the bearer token on every write:
//
//	POST   /session   {"token": "..."} → 204, Set-Cookie: the session (401 for a wrong token)
//	GET    /session   200 {"signed_in": true|false}
//	DELETE /session   204, the cookie cleared
//
// The session is sealed in its cookie (package session: encrypted, authenticated, with its
// expiry inside), under a key kept in -dir, so that sessions survive a restart. A cookie is what
// cross-site request forgery rides on: the writes are behind middleware.CrossOrigin (handler).

// signIn is what a session holds.
type signIn struct {
	SignedIn bool `json:"signed_in"`
}

// openSessions makes the session store, its key read from dir/session.key, made there on first
// start, and bound to the token: the sessions signed in with one token end when the server
// starts with another (a leaked token changed, a server that ran open given one), as the
// token's holders' rights do.
func openSessions(dir, token string, plaintext bool) (*session.Store[signIn], error) {
	key, err := sessionKey(filepath.Join(dir, "session.key"))
	if err != nil {
		return nil, err
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(token))
	// Over plain HTTP a Secure cookie would never come back: Insecure then.
	return session.New[signIn](session.Options{Keys: [][]byte{mac.Sum(nil)}, Name: "todo_session", Insecure: plaintext})
}

// sessionKey reads the key in path, or makes one there (readable by the owner only).
func sessionKey(path string) ([]byte, error) {
	key, err := os.ReadFile(path)
	if err == nil && len(key) == session.KeySize {
		return key, nil
	}
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	key = make([]byte, session.KeySize)
	rand.Read(key)
	return key, os.WriteFile(path, key, 0o600)
}

// signedIn reports whether the request carries a valid session.
func (a *app) signedIn(c *core.Ctx) bool {
	s, err := a.sessions.Load(c)
	return err == nil && s.SignedIn
}

// createSession handles POST /session: the token for a session cookie.
func (a *app) createSession(c *core.Ctx) {
	var in struct {
		Token string `json:"token"`
	}
	if err := body.ReadJSON(c, &in, body.JSONOptions{Limit: 1 << 10, DisallowUnknownFields: true}); err != nil {
		var be *body.Error
		if errors.As(err, &be) {
			fail(c, be.Status, be.Error())
		}
		return
	}
	if a.cfg.token != "" && subtle.ConstantTimeCompare([]byte(in.Token), []byte(a.cfg.token)) != 1 {
		fail(c, 401, "wrong token")
		return
	}
	// A fresh session on every sign-in, never one added to: a cookie planted before is gone.
	if err := a.sessions.Save(c, signIn{SignedIn: true}); err != nil {
		fail(c, 500, "the session could not be made")
		return
	}
	c.SetStatus(204)
}

// showSession handles GET /session.
func (a *app) showSession(c *core.Ctx) { body.WriteJSON(c, 200, signIn{SignedIn: a.signedIn(c)}) }

// deleteSession handles DELETE /session.
func (a *app) deleteSession(c *core.Ctx) {
	a.sessions.Clear(c)
	c.SetStatus(204)
}

// writes returns the middleware of the routes that change something: with a token set, a
// valid session or the bearer token.
func (a *app) writes() func(core.Handler) core.Handler {
	if a.cfg.token == "" {
		return func(h core.Handler) core.Handler { return h }
	}
	bearer := middleware.BearerAuth(middleware.BearerOptions{Token: a.cfg.token, Realm: "todo", Error: middleware.JSONError})
	return func(next core.Handler) core.Handler {
		withToken := bearer(next)
		return func(c *core.Ctx) {
			if a.signedIn(c) {
				next(c)
				return
			}
			withToken(c)
		}
	}
}
