package session

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// KeySize is the length of every key in Options.Keys: 32 bytes, for AES-256.
const KeySize = 32

// DefaultMaxAge is how long a session lasts when Options.MaxAge is zero.
const DefaultMaxAge = 24 * time.Hour

// Options configures a Store. Keys is required; the other fields have defaults that suit a
// session cookie served over HTTPS.
type Options struct {
	// Keys seal and open the cookies: the first seals every cookie Save writes, and each opens
	// the cookies Load reads, so that keys can be rotated without signing everyone out — put
	// the new key first and keep the old one until the last cookie it sealed has expired
	// (MaxAge after the change). Each is KeySize (32) random bytes from crypto/rand, kept
	// secret, the same on every server of the application. A key seals at most 2^32 cookies
	// before the random nonces of AES-GCM risk repeating: rotate long before then. New copies
	// the keys.
	Keys [][]byte

	// Name is the cookie's name. Empty means "session". A name starting with "__Host-" makes
	// browsers refuse the cookie unless it comes from the host itself over HTTPS with Path
	// "/" and no Domain, which keeps sibling subdomains from planting one (New checks those
	// conditions); "__Secure-" asks for HTTPS only.
	Name string

	// Path is the cookie's Path: the paths the browser sends it to. Empty means "/".
	Path string

	// Domain is the cookie's Domain. Empty means none, so that the browser sends the cookie
	// to the host that set it only, not to its subdomains, which is safer; set it to share
	// the session with subdomains.
	Domain string

	// MaxAge is how long a session lasts from the Save that wrote it: sealed in the cookie,
	// so that a cookie older than that is refused whoever sends it, and given to the browser
	// as the cookie's Max-Age and Expires, so that it forgets the cookie then. Zero means
	// DefaultMaxAge (24 hours). Save again to extend a session. It is counted in whole
	// seconds, as Max-Age is, the rest dropped; under a second, or negative, New refuses.
	MaxAge time.Duration

	// Insecure drops the cookie's Secure attribute, which otherwise keeps browsers from sending
	// it over plaintext HTTP, where anyone on the path could read and replay it. Set it only
	// for local development over http://localhost.
	Insecure bool

	// SameSite is the cookie's SameSite attribute. Zero means http.SameSiteLaxMode: the
	// browser sends the cookie with requests from other sites only for top-level navigations
	// by a safe method (following a link), not for their forms' POSTs, fetches or frames.
	// http.SameSiteStrictMode keeps it off links from other sites too;
	// http.SameSiteNoneMode sends it everywhere, which browsers accept only with Secure;
	// http.SameSiteDefaultMode writes no attribute, leaving it to the browser.
	SameSite http.SameSite

	// Now tells the time, for tests of expiry. Nil means time.Now.
	Now func() time.Time
}

// config is Options checked, with the defaults filled in.
type config struct {
	keys   [][]byte
	attrs  http.Cookie // every attribute but Value, MaxAge and Expires
	maxAge time.Duration
	now    func() time.Time
}

// check returns o's config, or an error that says what is wrong and how to fix it.
func (o *Options) check() (*config, error) {
	cf := &config{maxAge: o.MaxAge, now: o.Now}
	if len(o.Keys) == 0 {
		return nil, errors.New("session: Options.Keys is empty; give at least one key of 32 random bytes from crypto/rand")
	}
	for i, k := range o.Keys {
		if len(k) != KeySize {
			return nil, fmt.Errorf("session: Options.Keys[%d] is %d bytes long; each key must be %d bytes (AES-256), random, from crypto/rand", i, len(k), KeySize)
		}
		if allZero(k) {
			return nil, fmt.Errorf("session: Options.Keys[%d] is all zeros; fill it from crypto/rand", i)
		}
		cf.keys = append(cf.keys, append([]byte(nil), k...))
	}
	switch {
	case cf.maxAge == 0:
		cf.maxAge = DefaultMaxAge
	case cf.maxAge < time.Second:
		return nil, fmt.Errorf("session: Options.MaxAge %v is under a second; give how long a session lasts, as 24*time.Hour, or zero for %v", o.MaxAge, DefaultMaxAge)
	}
	cf.maxAge = cf.maxAge.Truncate(time.Second) // as Max-Age counts it
	if cf.now == nil {
		cf.now = time.Now
	}
	a := http.Cookie{
		Name:     o.Name,
		Path:     o.Path,
		Domain:   o.Domain,
		Secure:   !o.Insecure,
		HttpOnly: true,
		SameSite: o.SameSite,
	}
	if a.Name == "" {
		a.Name = "session"
	}
	if a.Path == "" {
		a.Path = "/"
	}
	if a.SameSite == 0 {
		a.SameSite = http.SameSiteLaxMode
	}
	if err := (&http.Cookie{Name: a.Name}).Valid(); err != nil {
		return nil, fmt.Errorf("session: Options.Name %q is not a cookie name, which is a token: letters, digits and !#$%%&'*+-.^_`|~", a.Name)
	}
	if err := a.Valid(); err != nil {
		return nil, fmt.Errorf("session: the cookie's options are not valid: %w", err)
	}
	switch {
	case !strings.HasPrefix(a.Path, "/"):
		return nil, fmt.Errorf("session: Options.Path %q does not start with \"/\"; browsers would replace it with the request's directory", a.Path)
	case a.SameSite < http.SameSiteDefaultMode || a.SameSite > http.SameSiteNoneMode:
		return nil, fmt.Errorf("session: Options.SameSite %d is not one of net/http's SameSite modes", a.SameSite)
	case a.SameSite == http.SameSiteNoneMode && !a.Secure:
		return nil, errors.New("session: Options.SameSite None with Insecure: browsers refuse SameSite=None cookies without Secure")
	// Browsers match the prefixes without regard to case, as RFC 6265bis now asks.
	case hasPrefixFold(a.Name, "__Secure-") && !a.Secure:
		return nil, fmt.Errorf("session: cookie name %q with Insecure: browsers refuse __Secure- cookies without Secure", a.Name)
	case hasPrefixFold(a.Name, "__Host-") && (!a.Secure || a.Path != "/" || a.Domain != ""):
		return nil, fmt.Errorf("session: cookie name %q needs Secure, Path \"/\" and no Domain, or browsers refuse it", a.Name)
	}
	cf.attrs = a
	return cf, nil
}

// hasPrefixFold reports whether s begins with prefix, compared without regard to case.
func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

func allZero(b []byte) bool {
	for _, x := range b {
		if x != 0 {
			return false
		}
	}
	return true
}
