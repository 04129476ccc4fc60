package middleware

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dwellhttp/dwell/core"
)

// CORSOptions configures CORS. The zero value allows no origin: responses only get
// Vary: Origin.
type CORSOptions struct {
	// Origins lists the origins allowed, as browsers send them in the Origin field: scheme,
	// host and port when not the default ("https://app.example.com"), compared without regard
	// to case. Nil allows none. "*" allows every origin and is answered as
	// Access-Control-Allow-Origin: *, never with the origin itself, which browsers honour only
	// for requests sent without credentials; it cannot go with Credentials (CORS panics).
	//
	// The origin "null" is what browsers send from sandboxed iframes, file: pages and after
	// redirects across origins, so any site can send it. "*" answers it with "*", as any other
	// origin, never with "null"; listed, it is named back as any listed origin is, and listed
	// with Credentials it lets every site read credentialed answers.
	Origins []string

	// Methods lists the methods a preflight may ask for. Nil means GET, HEAD, POST, PUT,
	// PATCH and DELETE.
	Methods []string

	// Headers lists the request header fields a preflight may ask for, compared without regard
	// to case. "*" allows any. Nil means Content-Type, Authorization and X-Request-Id.
	Headers []string

	// ExposeHeaders lists the response header fields that the page's scripts may read beyond
	// those that browsers always expose (Content-Type and a few others): X-Request-Id,
	// Location, say. Nil means none.
	ExposeHeaders []string

	// Credentials lets pages send credentials (cookies, Authorization) and read the answers
	// (Access-Control-Allow-Credentials: true), each allowed origin answered with itself since
	// browsers refuse "*" for requests with credentials. It needs Origins listed one by one:
	// with "*" among them CORS panics, since answering every origin with itself would let any
	// site read what its visitors' cookies unlock — the Fetch standard forbids "*" with
	// credentials for this reason.
	Credentials bool

	// MaxAge is how long a browser may keep a preflight's answer (Access-Control-Max-Age, in
	// whole seconds, rounded up: a part of a second is one, not the zero that would forbid
	// keeping it). Zero leaves it to the browser (5 s by the Fetch standard).
	MaxAge time.Duration
}

// CORS answers cross-origin requests from browsers (the Fetch standard's CORS protocol). Every
// response gets Vary: Origin, since what it says depends on the Origin field. A request from an
// allowed origin gets Access-Control-Allow-Origin (and Allow-Credentials and Expose-Headers as
// configured); one from another origin gets none of them, so its browser keeps the answer from
// the page. A preflight (OPTIONS with Access-Control-Request-Method) is answered here, 204,
// without running the handler: from an allowed origin asking for an allowed method and
// allowed header fields, with Access-Control-Allow-Origin, -Methods, -Headers and -Max-Age; from
// any other, with none of them, which the browser takes as a refusal.
//
// CORS does not refuse requests: a browser enforces the answer, and other clients are not
// bound by it. Authenticate requests as if CORS were not there, and put CORS in front of
// authentication so that preflights, which carry no credentials, are answered.
//
// CORS panics when Origins holds "*" and Credentials is set: list the origins instead.
func CORS(o CORSOptions) func(core.Handler) core.Handler {
	p := newCORSPolicy(o)
	return func(next core.Handler) core.Handler {
		return func(c *core.Ctx) {
			ob, ok := c.Bytes().Header("Origin")
			if !ok {
				c.AddHeader("Vary", "Origin")
				next(c)
				return
			}
			origin := string(ob)
			if c.Method() == "OPTIONS" {
				if method, ok := c.Bytes().Header("Access-Control-Request-Method"); ok {
					p.preflight(c, origin, string(method))
					return
				}
			}
			c.AddHeader("Vary", "Origin")
			if p.allowsOrigin(origin) {
				p.allowOrigin(c, origin)
				if p.expose != "" {
					c.SetHeader("Access-Control-Expose-Headers", p.expose)
				}
			}
			next(c)
		}
	}
}

// corsPolicy is CORSOptions prepared for requests.
type corsPolicy struct {
	anyOrigin   bool
	origins     []string // lower case
	methods     []string
	methodList  string
	anyHeader   bool
	headers     []string // lower case
	headerList  string
	expose      string
	credentials bool
	maxAge      string
}

func newCORSPolicy(o CORSOptions) *corsPolicy {
	p := &corsPolicy{credentials: o.Credentials}
	for _, s := range o.Origins {
		if s == "*" {
			p.anyOrigin = true
		}
		p.origins = append(p.origins, strings.ToLower(s))
	}
	if p.anyOrigin && p.credentials {
		panic(`dwell: CORS: Origins "*" with Credentials would let every site read its visitors' ` +
			`credentialed answers; list the origins allowed instead, as ` +
			`Origins: []string{"https://app.example.com"}, or drop Credentials`)
	}
	p.methods = o.Methods
	if p.methods == nil {
		p.methods = []string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"}
	}
	p.methodList = strings.Join(p.methods, ", ")
	headers := o.Headers
	if headers == nil {
		headers = []string{"Content-Type", "Authorization", RequestIDHeader}
	}
	for _, h := range headers {
		if h == "*" {
			p.anyHeader = true
		}
		p.headers = append(p.headers, strings.ToLower(h))
	}
	p.headerList = strings.Join(headers, ", ")
	p.expose = strings.Join(o.ExposeHeaders, ", ")
	if o.MaxAge > 0 {
		p.maxAge = strconv.FormatInt(int64((o.MaxAge+time.Second-1)/time.Second), 10)
	}
	return p
}

func (p *corsPolicy) allowsOrigin(origin string) bool {
	if p.anyOrigin {
		return true
	}
	for _, o := range p.origins {
		if len(o) == len(origin) && strings.EqualFold(o, origin) {
			return true
		}
	}
	return false
}

// allowOrigin sets the fields that let the page read the answer. An origin is named back only
// when it was listed: "*" is answered as "*", which browsers honour only for requests without
// credentials, so that "*" never vouches for an origin by name — "null" least of all.
func (p *corsPolicy) allowOrigin(c *core.Ctx, origin string) {
	if p.anyOrigin {
		c.SetHeader("Access-Control-Allow-Origin", "*")
	} else {
		c.SetHeader("Access-Control-Allow-Origin", origin)
	}
	if p.credentials {
		c.SetHeader("Access-Control-Allow-Credentials", "true")
	}
}

// preflight answers a preflight request: 204, with the allow fields only when all it asks for
// is allowed.
func (p *corsPolicy) preflight(c *core.Ctx, origin, method string) {
	c.AddHeader("Vary", "Origin, Access-Control-Request-Method, Access-Control-Request-Headers")
	requested := c.Header("Access-Control-Request-Headers")
	if p.allowsOrigin(origin) && slices.Contains(p.methods, method) && p.allowsHeaders(requested) {
		p.allowOrigin(c, origin)
		c.SetHeader("Access-Control-Allow-Methods", p.methodList)
		if p.anyHeader {
			// Named back, since "*" means no header at all for requests with credentials.
			if requested != "" {
				c.SetHeader("Access-Control-Allow-Headers", requested)
			}
		} else {
			c.SetHeader("Access-Control-Allow-Headers", p.headerList)
		}
		if p.maxAge != "" {
			c.SetHeader("Access-Control-Max-Age", p.maxAge)
		}
	}
	c.SetStatus(204)
}

// allowsHeaders reports whether every field of an Access-Control-Request-Headers value is
// allowed.
func (p *corsPolicy) allowsHeaders(requested string) bool {
	if p.anyHeader {
		return true
	}
	for h := range strings.SplitSeq(requested, ",") {
		h = strings.TrimSpace(h)
		if h == "" {
			continue
		}
		if !slices.ContainsFunc(p.headers, func(a string) bool { return strings.EqualFold(a, h) }) {
			return false
		}
	}
	return true
}
