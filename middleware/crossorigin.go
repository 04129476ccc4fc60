package middleware

import (
	"net/url"
	"strconv"
	"strings"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/internal/syntax"
)

// CrossOriginOptions configures CrossOrigin. The zero value trusts no other origin and
// bypasses nothing: every cross-origin browser request that may change state is refused.
type CrossOriginOptions struct {
	// TrustedOrigins lists the origins whose pages may send requests that change state, as a
	// front end served from another origin does: each written as browsers send the Origin
	// field, scheme, host, and port when not the scheme's default ("https://app.example.com",
	// "http://localhost:5173"), compared without regard to case. An origin CORS lets send
	// credentialed requests belongs here too, or CrossOrigin refuses what CORS allowed.
	//
	// One that is not written as an origin makes CrossOrigin panic, since it could never
	// match and the front end it was meant for would be refused: a path (even "/"), a query,
	// user information, or the default port, which browsers leave out. "*" and "null" panic
	// too: "*" would turn the protection off, and "null" is what a sandboxed iframe or a file:
	// page of any site sends.
	TrustedOrigins []string

	// Bypass lists the requests let through whatever their origin: those another site's page
	// sends by design, such as the form an OpenID Connect or SAML identity provider posts to
	// the application's callback. A pattern is a path, matched exactly ("/saml/acs"), or a path
	// ending in "/*", which matches every path under it ("/hooks/*" matches "/hooks/" and
	// "/hooks/a/b", not "/hooks"), optionally after a method and a space ("POST /saml/acs"),
	// which the request's method must then equal. Paths are compared as the router sees them,
	// percent-decoded, and a request whose path holds a "." or ".." segment or a doubled
	// slash is never bypassed, so that a path that would be cleaned or redirected elsewhere
	// cannot borrow a bypass. A pattern of another form panics: no leading "/", a "*" other than
	// a last "/*", a query, an unclean path, or a safe method (which needs no bypass).
	Bypass []string

	// Error writes the 403. Nil means TextError.
	Error ErrorFunc
}

// The refusals' messages: the first when the browser said the request is cross-origin, the
// second when a browser too old for Sec-Fetch-Site sent an Origin that is not the Host.
const (
	crossOriginRefused = "cross-origin request refused"
	crossOriginOldHost = "cross-origin request refused: its Origin is not this host"
)

// CrossOrigin protects against cross-site request forgery (CSRF): a page on another site
// making its visitor's browser send a request here — a form it submits, a fetch — that
// carries the visitor's cookies, so that the application acts as if the visitor had asked.
// It refuses, with 403, the requests that may change state (every method but GET, HEAD and
// OPTIONS) that a browser marks as sent by another origin, and lets through all the others,
// the way Go's net/http.CrossOriginProtection does; there are no tokens to put in forms.
//
// Browsers tell where a request comes from in two fields that no page can set or forge.
// Sec-Fetch-Site, which every major browser has sent since 2023, says how the page that sent
// the request relates to this server: "same-origin" and "none" (the user typed the address or
// used a bookmark) pass; "same-site" and "cross-site" are refused — same-site too, since a
// sibling subdomain (a user-content host, an old marketing site) is another origin and may be
// hostile. Without Sec-Fetch-Site, an Origin is compared with the request's Host: the same
// host and port pass, another is refused. The scheme cannot be compared, since Host holds
// none (and behind a proxy that terminates TLS the server's own scheme is not the browser's),
// so an old browser's request from a page on http://host to https://host passes; HTTP Strict
// Transport Security keeps browsers off the http:// origin. A request with neither field
// passes: it comes from a program other than a browser, which carries no visitor's cookies
// and is not what CSRF is about, or from a browser too old to send either.
//
// A request that would be refused passes when its Origin is one of TrustedOrigins or when it
// matches a Bypass pattern. Hosts and origins are compared without regard to case; the values of
// Sec-Fetch-Site are compared as browsers send them, in lower case, so that any other is
// taken as cross-origin.
//
// What CrossOrigin does not stop: state changed by a GET (safe methods always pass, so they
// must not change state), a script of the same origin (cross-site scripting), and requests
// made by programs other than browsers, which authentication is for.
//
// Put it in front of the handlers that act on cookies (router.Router.Use), behind CORS, whose
// preflights are OPTIONS requests and pass. A request let through costs no allocation when the
// browser sent Sec-Fetch-Site (or the request carries neither field), and one, for the Host, when
// an Origin is compared with it. CrossOrigin panics when a TrustedOrigins entry or a Bypass
// pattern is malformed, saying which and why.
func CrossOrigin(o CrossOriginOptions) func(core.Handler) core.Handler {
	p := newCrossOriginPolicy(o)
	return func(next core.Handler) core.Handler {
		return func(c *core.Ctx) {
			if msg := p.check(c); msg != "" {
				p.refuse(c, 403, msg)
				return
			}
			next(c)
		}
	}
}

// crossOriginPolicy is CrossOriginOptions prepared for requests.
type crossOriginPolicy struct {
	trusted []string
	bypass  []bypassPattern
	refuse  ErrorFunc
}

// A bypassPattern is a Bypass entry parsed.
type bypassPattern struct {
	method string // "" for any
	path   string // with its trailing "/" but not the "*" when prefix
	prefix bool
}

func newCrossOriginPolicy(o CrossOriginOptions) *crossOriginPolicy {
	p := &crossOriginPolicy{refuse: o.Error}
	if p.refuse == nil {
		p.refuse = TextError
	}
	for _, s := range o.TrustedOrigins {
		if why := checkOrigin(s); why != "" {
			panic("dwell: CrossOrigin: trusted origin " + strconv.Quote(s) + ": " + why +
				`; write origins as browsers send them in the Origin field, as "https://app.example.com" or "http://localhost:8080"`)
		}
		p.trusted = append(p.trusted, s)
	}
	for _, s := range o.Bypass {
		b, why := parseBypass(s)
		if why != "" {
			panic("dwell: CrossOrigin: bypass pattern " + strconv.Quote(s) + ": " + why +
				`; write a path, "/saml/acs", a path ending in "/*", "/hooks/*", or either after a method, "POST /saml/acs"`)
		}
		p.bypass = append(p.bypass, b)
	}
	return p
}

// check returns why the request is refused, or "" when it passes. It reads the request's
// fields as borrowed bytes, so that it allocates nothing but the Host when it compares with it.
func (p *crossOriginPolicy) check(c *core.Ctx) string {
	switch c.Method() {
	case "GET", "HEAD", "OPTIONS":
		return ""
	}
	origin, _ := c.Bytes().Header("Origin")
	if site, _ := c.Bytes().Header("Sec-Fetch-Site"); len(site) > 0 {
		switch string(site) {
		case "same-origin", "none":
			return ""
		}
		if p.exempt(c, origin) {
			return ""
		}
		return crossOriginRefused
	}
	if len(origin) == 0 {
		return "" // not a browser, or one too old to tell
	}
	if host, ok := originHost(origin); ok && syntax.EqualFold(host, c.Host()) {
		return ""
	}
	if p.exempt(c, origin) {
		return ""
	}
	return crossOriginOldHost
}

// exempt reports whether a request check would refuse passes nonetheless: its origin is
// trusted, or it matches a bypass pattern.
func (p *crossOriginPolicy) exempt(c *core.Ctx, origin []byte) bool {
	if len(origin) > 0 {
		for _, t := range p.trusted {
			if syntax.EqualFold(origin, t) {
				return true
			}
		}
	}
	if len(p.bypass) == 0 {
		return false
	}
	path := c.Bytes().Path()
	if !cleanPath(path) {
		return false
	}
	method := c.Method()
	for _, b := range p.bypass {
		if b.matches(method, path) {
			return true
		}
	}
	return false
}

func (b *bypassPattern) matches(method string, path []byte) bool {
	if b.method != "" && b.method != method {
		return false
	}
	if b.prefix {
		return len(path) >= len(b.path) && string(path[:len(b.path)]) == b.path
	}
	return string(path) == b.path
}

// originHost returns the host and port of an Origin value, "scheme://host[:port]", or false
// when the value is not of that form: "null", or anything with a path.
func originHost(origin []byte) ([]byte, bool) {
	i := strings.Index(string(origin), "://")
	if i <= 0 {
		return nil, false
	}
	host := origin[i+3:]
	if len(host) == 0 || strings.ContainsAny(string(host), "/?#@ ") {
		return nil, false
	}
	return host, true
}

// checkOrigin returns what is wrong with a trusted origin, or "".
func checkOrigin(s string) string {
	switch {
	case s == "*":
		return `"*" would trust every site, which is no protection at all; list the origins instead, or leave CrossOrigin out`
	case strings.EqualFold(s, "null"):
		return `"null" is sent by sandboxed iframes, file: pages and redirected requests of any site, so it cannot be trusted`
	}
	u, err := url.Parse(s)
	switch {
	case err != nil:
		return "it is not a URL (" + err.Error() + ")"
	case u.Scheme == "" || u.Opaque != "" || !strings.Contains(s, "://"):
		return "it has no scheme://"
	case u.User != nil:
		return "it has user information, which an Origin never holds"
	case u.Hostname() == "":
		return "it has no host"
	case u.Path != "" || u.RawPath != "" || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || strings.Contains(s, "#"):
		return "it has a path, a query or a fragment, while an origin ends after the host and port"
	case strings.HasSuffix(u.Host, ":"):
		return "it has an empty port"
	case strings.EqualFold(u.Scheme, "https") && u.Port() == "443", strings.EqualFold(u.Scheme, "http") && u.Port() == "80":
		return "browsers leave the default port out of Origin, so it would never match"
	}
	return ""
}

// parseBypass parses a Bypass pattern, or returns what is wrong with it.
func parseBypass(s string) (bypassPattern, string) {
	var b bypassPattern
	path := s
	if method, rest, ok := strings.Cut(s, " "); ok && !strings.HasPrefix(s, "/") {
		if !syntax.IsToken(method) {
			return b, "the method " + strconv.Quote(method) + " is not a method"
		}
		switch method {
		case "GET", "HEAD", "OPTIONS":
			return b, method + " requests always pass, so a bypass for them does nothing"
		}
		b.method, path = method, rest
	}
	if !strings.HasPrefix(path, "/") {
		return b, `the path does not start with "/"`
	}
	if strings.ContainsAny(path, "?#") {
		return b, "patterns match paths, without a query or fragment"
	}
	if strings.HasSuffix(path, "/*") {
		b.prefix = true
		path = path[:len(path)-1]
	}
	if strings.Contains(path, "*") {
		return b, `"*" may only end a pattern, after a "/"`
	}
	if !cleanPath([]byte(path)) {
		return b, `the path has a ".", ".." or empty segment, which no request that may be bypassed has`
	}
	b.path = path
	return b, ""
}

// cleanPath reports whether a path starts with "/" and has no ".", ".." or empty segment but
// the last. A path with one may be cleaned into another further on — by the router's
// redirect, a file server, a proxy — so that a bypass granted to its first segments could end
// up granted to a path no pattern names.
func cleanPath(p []byte) bool {
	if len(p) == 0 || p[0] != '/' {
		return false
	}
	start := 1
	for i := 1; i <= len(p); i++ {
		if i < len(p) && p[i] != '/' {
			continue
		}
		seg := p[start:i]
		if len(seg) == 0 && i < len(p) || string(seg) == "." || string(seg) == ".." {
			return false
		}
		start = i + 1
	}
	return true
}
