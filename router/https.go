package router

import (
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/dwellhttp/dwell/core"
)

// RedirectToHTTPS returns a handler that sends every request to the same URL over HTTPS: the
// handler of a plaintext listener (usually on port 80) beside the one that serves HTTPS on
// httpsPort. The target is https://HOST[:httpsPort]/path?query, made of the request's
// own host (its Host header, or the authority of an absolute-form target) with any port
// removed, httpsPort added unless it is "443" (or empty, which means "443" too), and the
// request-target's path and query exactly as received.
//
// GET and HEAD get 301 Moved Permanently, which browsers and caches remember, as nginx's
// `return 301 https://$host$request_uri;` does; every other method gets 308 Permanent
// Redirect, which keeps the method and the body (RFC 9110 §15.4.9), so that a POST sent to
// the plaintext port is sent again as a POST rather than turned into a GET. Either way the
// answer has no body. (golang.org/x/crypto/acme/autocert's HTTPHandler, by contrast, answers
// 302 and refuses other methods with 400.)
//
// A request with no host, or one that is not a DNS name or an IP address (with an optional
// port), is answered 400 rather than redirected anywhere; so is a request whose target is not
// a path (OPTIONS *, CONNECT's authority). httpsPort must be a port number, 1 to 65535, or
// empty: anything else panics, since it is start-up code.
//
// Serve it as the plain listener's handler, or as a router's NotFound behind the routes that
// must stay on plaintext (an ACME HTTP-01 challenge, say). One server serves both, and shuts
// them down together:
//
//	srv := core.NewServer(r.Handler(), core.Options{Addr: ":443"})
//	srv.AddListener(core.Listener{Addr: ":80", Handler: router.RedirectToHTTPS("443")})
//	log.Fatal(srv.ListenAndServeTLS("cert.pem", "key.pem"))
//
// When the HTTPS port is known only once its server listens (port 0, or a port from the
// configuration that the handler should not repeat), use RedirectToHTTPSAddr.
//
// Clients that must never speak plaintext at all also want a Strict-Transport-Security header
// on the HTTPS side: the redirect only helps those that come by http:// first.
func RedirectToHTTPS(httpsPort string) core.Handler {
	suffix := ""
	switch httpsPort {
	case "", "443":
	default:
		n, err := strconv.ParseUint(httpsPort, 10, 16)
		if err != nil || n == 0 || httpsPort[0] == '0' || httpsPort[0] == '+' {
			panic("dwell: RedirectToHTTPS: invalid HTTPS port " + strconv.Quote(httpsPort) +
				"; for a port known only once the HTTPS server listens, use RedirectToHTTPSAddr(srv.Addr)")
		}
		suffix = ":" + httpsPort
	}
	return redirectToHTTPS(func() (string, bool) { return suffix, true })
}

// RedirectToHTTPSAddr is RedirectToHTTPS with the HTTPS port read from addr at each request
// rather than given when the handler is made, so that the handler can be made before the HTTPS
// server listens — on port 0, which picks a free port, say:
//
//	srv := core.NewServer(r.Handler(), core.Options{Addr: ":0", TLSConfig: cfg})
//	srv.AddListener(core.Listener{Addr: ":80", Handler: router.RedirectToHTTPSAddr(srv.Addr)})
//
// addr is usually a *core.Server's Addr method; a net.Listener's is another. Its port is the
// HTTPS port (left out of the Location when it is 443). A request that comes while addr
// reports no address or port yet (a server that has not called Listen, or Serve) is answered
// 503 Service Unavailable: there is nowhere to send it yet. Once addr has reported a port it
// is not called again, since a server's address does not change once it listens: the
// requests after pay for no lock of the other server's. A nil addr panics.
func RedirectToHTTPSAddr(addr func() net.Addr) core.Handler {
	if addr == nil {
		panic("dwell: RedirectToHTTPSAddr: nil addr; pass the HTTPS server's Addr method")
	}
	var known atomic.Pointer[string] // the Location's port part, once addr has told it
	return redirectToHTTPS(func() (string, bool) {
		if suffix := known.Load(); suffix != nil {
			return *suffix, true
		}
		port := portOf(addr())
		if port == 0 {
			return "", false
		}
		suffix := ""
		if port != 443 {
			suffix = ":" + strconv.Itoa(port)
		}
		known.Store(&suffix)
		return suffix, true
	})
}

// portOf returns the port of a listening address, or 0 when there is none.
func portOf(a net.Addr) int {
	switch a := a.(type) {
	case nil:
		return 0
	case *net.TCPAddr:
		if a == nil {
			return 0
		}
		return a.Port
	}
	_, port, err := net.SplitHostPort(a.String())
	if err != nil {
		return 0
	}
	n, err := strconv.ParseUint(port, 10, 16)
	if err != nil {
		return 0
	}
	return int(n)
}

// redirectToHTTPS returns the handler of RedirectToHTTPS, whose Location's port part (":8443",
// or "" for 443) suffix returns, or reports that it is not known yet.
func redirectToHTTPS(suffix func() (string, bool)) core.Handler {
	return func(c *core.Ctx) {
		host, ok := redirectHost(c.Host())
		if !ok {
			plainError(c, 400, "400 bad request: no valid Host to redirect to\n")
			return
		}
		target, ok := originForm(c.Target())
		if !ok {
			plainError(c, 400, "400 bad request: the target is not a path\n")
			return
		}
		port, ok := suffix()
		if !ok {
			plainError(c, 503, "503 service unavailable: the HTTPS server is not listening yet\n")
			return
		}
		code := 308
		if m := c.Method(); m == "GET" || m == "HEAD" {
			code = 301
		}
		c.SetHeader("Location", "https://"+host+port+target)
		c.SetStatus(code)
	}
}

// redirectHost returns the host of an authority (host, host:port, [v6], [v6]:port), without
// its port, when it is a DNS name or an IP address; a name is kept as it came, in ASCII.
func redirectHost(authority string) (string, bool) {
	if authority == "" {
		return "", false
	}
	host, port := authority, ""
	if authority[0] == '[' {
		end := strings.IndexByte(authority, ']')
		if end < 0 {
			return "", false
		}
		host, port = authority[:end+1], authority[end+1:]
		a, err := netip.ParseAddr(host[1 : len(host)-1])
		if err != nil || !a.Is6() || a.Zone() != "" {
			return "", false
		}
	} else if i := strings.LastIndexByte(authority, ':'); i >= 0 {
		host, port = authority[:i], authority[i:]
	}
	if port != "" && (port[0] != ':' || !allDigits(port[1:])) {
		return "", false
	}
	if host == "" || host[0] != '[' && !isHostname(host) {
		return "", false
	}
	return host, true
}

// isHostname reports whether s is a DNS name or a dotted IPv4 address: labels of letters,
// digits, '-' and '_' (which some internal names have) separated by dots, with at most a
// trailing dot, 253 characters at most.
func isHostname(s string) bool {
	if s == "" || len(s) > 254 || s[0] == '.' || strings.Contains(s, "..") {
		return false
	}
	for i := 0; i < len(s); i++ {
		b := s[i]
		switch {
		case 'a' <= b && b <= 'z', 'A' <= b && b <= 'Z', '0' <= b && b <= '9', b == '-', b == '_', b == '.':
		default:
			return false
		}
	}
	return true
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// originForm returns the path and query of a request-target: an origin-form target as it is,
// an absolute-form one's path (or "/") and query. The authority and asterisk forms have none.
func originForm(target string) (string, bool) {
	if strings.HasPrefix(target, "/") {
		return target, true
	}
	u, err := url.Parse(target)
	if err != nil || u.Scheme == "" || u.Opaque != "" || u.Host == "" {
		return "", false
	}
	u.Fragment, u.RawFragment = "", ""
	return u.RequestURI(), true
}
