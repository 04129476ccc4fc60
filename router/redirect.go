package router

import (
	"net/url"
	"slices"
	"strings"

	"github.com/dwellhttp/dwell/core"
	"github.com/julienschmidt/httprouter"
)

// redirectTarget returns where a redirect sends c, a missed request of method and path, and
// its code, when RedirectTrailingSlash or RedirectFixedPath finds a path that matches a route;
// code 0 when neither does. Every target is looked up first, so a redirect never leads to
// another miss or a loop.
func (r *Router) redirectTarget(c *core.Ctx, method, path string) (to string, code int) {
	to, code = r.redirectPath(method, path)
	if code != 0 && encodedSlash(c.Target()) {
		// The target is worked out on the decoded path, where "a%2Fb" is "a/b": sent to it,
		// the client would ask for another resource (RFC 3986 §2.2), one a handler that reads
		// the escaped path (a mounted net/http handler, a proxy) tells apart.
		return "", 0
	}
	return to, code
}

// encodedSlash reports whether a request target's path has an encoded slash.
func encodedSlash(target string) bool {
	p, _, _ := strings.Cut(target, "?")
	for i := 0; i+2 < len(p); i++ {
		if p[i] == '%' && p[i+1] == '2' && (p[i+2] == 'F' || p[i+2] == 'f') {
			return true
		}
	}
	return false
}

// redirectPath is redirectTarget's work on the decoded path alone.
func (r *Router) redirectPath(method, path string) (to string, code int) {
	if method == "CONNECT" || path == "/" || path == "" || path[0] != '/' {
		return "", 0
	}
	if !slices.ContainsFunc(routeKeys(method), func(k string) bool { return r.byKey[k] != nil }) {
		return "", 0
	}
	// 301 lets clients turn the retry into a GET, which for GET and HEAD changes nothing;
	// 308 keeps the method and body of the others (RFC 9110 §15.4.9).
	code = 308
	if method == "GET" || method == "HEAD" {
		code = 301
	}
	if r.RedirectTrailingSlash {
		if _, tsr := r.matches(method, path); tsr {
			to := toggleSlash(path)
			// A target starting "//" would be read as another host's address.
			if !strings.HasPrefix(to, "//") {
				if hit, _ := r.matches(method, to); hit {
					return to, code
				}
			}
		}
	}
	if r.RedirectFixedPath {
		if to, ok := r.fixedPath(method, path); ok {
			return to, code
		}
	}
	return "", 0
}

// fixedPath returns the path that the cleaned path matches case-insensitively (trying it
// with the trailing slash toggled too, when RedirectTrailingSlash is set), spelled as the
// route spells it. Routes are tried in lookup's order: the method's (then GET's for HEAD, then
// the Any routes), and within each, those without parameters first, in registration order.
func (r *Router) fixedPath(method, path string) (string, bool) {
	clean := httprouter.CleanPath(path)
	tries := []string{clean}
	if r.RedirectTrailingSlash && clean != "/" {
		tries = append(tries, toggleSlash(clean))
	}
	for _, p := range tries {
		for _, key := range routeKeys(method) {
			for _, rt := range r.byKey[key] {
				to, ok := matchFold(rt.tokens, p)
				if !ok || to == path {
					continue
				}
				if hit, _ := r.matches(method, to); hit {
					return to, true
				}
			}
		}
	}
	return "", false
}

// routeKeys returns the method keys whose routes a request with method may reach, in the
// order lookup tries them.
func routeKeys(method string) []string {
	if method == "HEAD" {
		return []string{"HEAD", "GET", anyMethod}
	}
	return []string{method, anyMethod}
}

func toggleSlash(p string) string {
	if len(p) > 1 && p[len(p)-1] == '/' {
		return p[:len(p)-1]
	}
	return p + "/"
}

// sendRedirect answers with code and a Location of path (escaped again, since the request's
// path was decoded) and the request's query.
func sendRedirect(c *core.Ctx, path string, code int) {
	loc := (&url.URL{Path: path}).EscapedPath()
	if q := c.RawQuery(); q != "" {
		loc += "?" + q
	}
	c.SetHeader("Location", loc)
	c.SetStatus(code)
}
