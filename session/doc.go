// Package session keeps a session — who is signed in, a cart, a flash message — in a cookie
// the server seals, so that the server keeps nothing: a Store[T] writes a value of the
// application's type T into the response's Set-Cookie field (Store.Save), reads it back from
// the requests that follow (Store.Load), and deletes it (Store.Clear).
//
//	sessions, err := session.New[Login](session.Options{Keys: [][]byte{key}})
//
//	err := sessions.Save(c, Login{User: "ada"})  // on sign-in
//	login, err := sessions.Load(c)                // on every request after it
//	sessions.Clear(c)                             // on sign-out
//
// Require guards the routes that need a session: a request without one (or with one expired)
// does not reach their handlers, and is refused in the server's refusal format — JSON with
// middleware.JSONRefusal — or, for a browser going to a page, sent to the sign-in page:
//
//	account.Use(session.Require(sessions, session.RequireOptions{SignIn: "/login", Next: "next"}))
//
// The value is encoded as JSON, then sealed with AES-256-GCM under the first of Options.Keys,
// with the moment it expires inside, and written in base64url. What that stops:
//
//   - Reading: the cookie is encrypted, so neither the visitor nor anyone who sees it learns
//     what the session holds.
//   - Tampering: GCM authenticates the cookie, so that a change to any byte of it, or a value
//     made up without the key, is refused (ErrInvalid) rather than believed — a visitor
//     cannot make themselves another user or an administrator.
//   - Replay after expiry: the expiry time is sealed with the value, so that a cookie kept
//     past its Max-Age — by a browser that ignores it, by a thief, from a log — is refused
//     (ErrExpired) whatever the browser says.
//   - Moving between cookies: the cookie's name is authenticated with it, so that a value
//     sealed for one cookie name (of another Store, with other meaning) is refused under
//     another.
//
// And what it does not stop, which is the application's to handle:
//
//   - Replay before expiry: a stolen cookie is valid until it expires, and Clear cannot
//     revoke it, since the server keeps no list of sessions: Clear only asks the visitor's own
//     browser to forget it. Keep Options.MaxAge short, keep the cookie from scripts (HttpOnly,
//     always set) and from plaintext (Secure, set unless Options.Insecure), and where a
//     session must be revocable, keep a server-side id or version in it and check it.
//   - Session fixation: an attacker who plants a session cookie in a visitor's browser (from
//     a sibling subdomain, say) before they sign in must not end up sharing it. Save a fresh
//     value on sign-in rather than adding to the one loaded, and prefer a cookie name with the
//     "__Host-" prefix, which browsers accept only from the host itself, over HTTPS, for Path
//     "/" and no Domain.
//   - Cross-site request forgery: SameSite=Lax (the default) keeps the cookie off most
//     cross-site requests, but not off those from sibling subdomains; use
//     middleware.CrossOrigin in front of the handlers that change state.
//   - Changing keys: a cookie sealed under a key removed from Options.Keys is refused;
//     rotate by putting the new key first and keeping the old one until the cookies it sealed
//     have expired.
//
// A cookie holds at most 4096 bytes, as browsers count it (name, value and attributes):
// Save refuses a session that would be larger (ErrTooLarge) rather than have browsers drop it.
// Keep an id and small facts in the session, and the rest on the server.
package session
