package middleware_test

import (
	"strings"
	"testing"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/core/coretest"
	"github.com/dwellhttp/dwell/middleware"
)

// TestCrossOrigin: every branch of the decision — safe methods, each Sec-Fetch-Site value,
// Origin against Host (host, port, scheme, case, malformed values, "null", an absolute-form
// target's authority), trusted origins and bypass patterns — with the handler run exactly when
// the request passes, and the refusal's answer.
func TestCrossOrigin(t *testing.T) {
	policies := map[string]middleware.CrossOriginOptions{
		"default": {},
		"trusted": {TrustedOrigins: []string{"https://app.example", "http://localhost:5173", "HTTPS://Upper.Example"}},
		"bypass":  {Bypass: []string{"/saml/acs", "/hooks/*", "POST /only-post", "/a b"}},
	}
	addrs := map[string]string{}
	ran := make(chan bool, 1)
	for name, o := range policies {
		_, addrs[name] = coretest.Serve(t, middleware.CrossOrigin(o)(func(c *core.Ctx) {
			select {
			case ran <- true:
			default: // a case failed before it took the last one
			}
			c.WriteString("ok")
		}), core.Options{})
	}
	const (
		pass   = 200
		refuse = 403
	)
	cases := []struct {
		name, policy string
		req          string // the request line; "POST /" when empty
		fields       string // header fields beyond Host: h
		status       int
	}{
		// Safe methods pass whatever the browser says.
		{"GET cross-site", "default", "GET /", "Sec-Fetch-Site: cross-site\r\nOrigin: https://evil.example\r\n", pass},
		{"HEAD cross-site", "default", "HEAD /", "Sec-Fetch-Site: cross-site\r\nOrigin: https://evil.example\r\n", pass},
		{"OPTIONS cross-site", "default", "OPTIONS /", "Sec-Fetch-Site: cross-site\r\nOrigin: https://evil.example\r\n", pass},
		{"OPTIONS *", "default", "OPTIONS *", "Sec-Fetch-Site: cross-site\r\n", pass},

		// Neither field: not a browser, or too old a one.
		{"POST, no fields", "default", "", "", pass},
		{"PUT, no fields", "default", "PUT /", "", pass},
		{"DELETE, no fields", "default", "DELETE /", "", pass},

		// Sec-Fetch-Site decides when present, Origin or not.
		{"same-origin", "default", "", "Sec-Fetch-Site: same-origin\r\nOrigin: http://h\r\n", pass},
		{"same-origin, no Origin", "default", "", "Sec-Fetch-Site: same-origin\r\n", pass},
		{"none", "default", "", "Sec-Fetch-Site: none\r\n", pass},
		{"same-site", "default", "", "Sec-Fetch-Site: same-site\r\nOrigin: https://sub.h\r\n", refuse},
		{"cross-site", "default", "", "Sec-Fetch-Site: cross-site\r\nOrigin: https://evil.example\r\n", refuse},
		{"cross-site, no Origin", "default", "", "Sec-Fetch-Site: cross-site\r\n", refuse},
		{"cross-site, Origin is the Host", "default", "", "Sec-Fetch-Site: cross-site\r\nOrigin: http://h\r\n", refuse},
		{"cross-site DELETE", "default", "DELETE /", "Sec-Fetch-Site: cross-site\r\n", refuse},
		{"cross-site PATCH", "default", "PATCH /", "Sec-Fetch-Site: cross-site\r\n", refuse},
		{"cross-site, other method", "default", "PURGE /", "Sec-Fetch-Site: cross-site\r\n", refuse},
		{"same-origin in capitals", "default", "", "Sec-Fetch-Site: Same-Origin\r\n", refuse},
		{"NONE", "default", "", "Sec-Fetch-Site: NONE\r\n", refuse},
		{"unknown value", "default", "", "Sec-Fetch-Site: same-planet\r\n", refuse},
		{"same-origin, the second field", "default", "", "Sec-Fetch-Site: cross-site\r\nSec-Fetch-Site: same-origin\r\n", refuse},
		{"empty, no Origin", "default", "", "Sec-Fetch-Site:\r\n", pass},
		{"empty, other Origin", "default", "", "Sec-Fetch-Site:\r\nOrigin: https://evil.example\r\n", refuse},

		// No Sec-Fetch-Site: Origin against Host.
		{"Origin is the Host", "default", "", "Origin: http://h\r\n", pass},
		{"Origin is the Host, https", "default", "", "Origin: https://h\r\n", pass}, // the scheme is not compared
		{"Origin is the Host, other scheme", "default", "", "Origin: ftp://h\r\n", pass},
		{"Origin in capitals", "default", "", "Origin: HTTP://H\r\n", pass},
		{"Origin with a port, Host without", "default", "", "Origin: http://h:8080\r\n", refuse},
		{"other host", "default", "", "Origin: https://evil.example\r\n", refuse},
		{"suffix of the Host", "default", "", "Origin: http://hh\r\n", refuse},
		{"null", "default", "", "Origin: null\r\n", refuse},
		{"no scheme", "default", "", "Origin: h\r\n", refuse},
		{"empty scheme", "default", "", "Origin: ://h\r\n", refuse},
		{"with a path", "default", "", "Origin: http://h/\r\n", refuse},
		{"with user information", "default", "", "Origin: http://u@h\r\n", refuse},
		{"empty host", "default", "", "Origin: http://\r\n", refuse},
		{"empty Origin", "default", "", "Origin:\r\n", pass}, // as absent
		{"absolute-form, other authority", "default", "POST http://other/", "Origin: http://h\r\n", refuse},
		{"absolute-form, same authority", "default", "POST http://other/", "Origin: http://other\r\n", pass},

		// Trusted origins, whatever Sec-Fetch-Site says.
		{"trusted, cross-site", "trusted", "", "Sec-Fetch-Site: cross-site\r\nOrigin: https://app.example\r\n", pass},
		{"trusted, same-site", "trusted", "", "Sec-Fetch-Site: same-site\r\nOrigin: https://app.example\r\n", pass},
		{"trusted, no Sec-Fetch-Site", "trusted", "", "Origin: https://app.example\r\n", pass},
		{"trusted, in capitals", "trusted", "", "Sec-Fetch-Site: cross-site\r\nOrigin: HTTPS://APP.EXAMPLE\r\n", pass},
		{"trusted, listed in capitals", "trusted", "", "Sec-Fetch-Site: cross-site\r\nOrigin: https://upper.example\r\n", pass},
		{"trusted with port", "trusted", "", "Sec-Fetch-Site: cross-site\r\nOrigin: http://localhost:5173\r\n", pass},
		{"trusted, other port", "trusted", "", "Sec-Fetch-Site: cross-site\r\nOrigin: http://localhost:5174\r\n", refuse},
		{"trusted, default port written", "trusted", "", "Sec-Fetch-Site: cross-site\r\nOrigin: https://app.example:443\r\n", refuse},
		{"trusted, other scheme", "trusted", "", "Sec-Fetch-Site: cross-site\r\nOrigin: http://app.example\r\n", refuse},
		{"trusted, longer host", "trusted", "", "Sec-Fetch-Site: cross-site\r\nOrigin: https://app.example.evil\r\n", refuse},
		{"trusted, no Origin", "trusted", "", "Sec-Fetch-Site: cross-site\r\n", refuse},
		{"trusted, null", "trusted", "", "Sec-Fetch-Site: cross-site\r\nOrigin: null\r\n", refuse},
		{"trusted, untrusted Origin, no Sec-Fetch-Site", "trusted", "", "Origin: https://evil.example\r\n", refuse},

		// Bypass patterns.
		{"bypass exact", "bypass", "POST /saml/acs", "Sec-Fetch-Site: cross-site\r\nOrigin: https://idp.example\r\n", pass},
		{"bypass exact, old browser", "bypass", "POST /saml/acs", "Origin: https://idp.example\r\n", pass},
		{"bypass exact, null", "bypass", "POST /saml/acs", "Sec-Fetch-Site: cross-site\r\nOrigin: null\r\n", pass},
		{"bypass exact, any method", "bypass", "PUT /saml/acs", "Sec-Fetch-Site: cross-site\r\n", pass},
		{"bypass exact, trailing slash", "bypass", "POST /saml/acs/", "Sec-Fetch-Site: cross-site\r\n", refuse},
		{"bypass exact, longer", "bypass", "POST /saml/acsx", "Sec-Fetch-Site: cross-site\r\n", refuse},
		{"bypass exact, other case", "bypass", "POST /SAML/acs", "Sec-Fetch-Site: cross-site\r\n", refuse},
		{"bypass prefix, its root", "bypass", "POST /hooks/", "Sec-Fetch-Site: cross-site\r\n", pass},
		{"bypass prefix, below", "bypass", "POST /hooks/a/b", "Sec-Fetch-Site: cross-site\r\n", pass},
		{"bypass prefix, encoded", "bypass", "POST /hooks/%61", "Sec-Fetch-Site: cross-site\r\n", pass},
		{"bypass prefix, encoded slash", "bypass", "POST /hooks%2Fa", "Sec-Fetch-Site: cross-site\r\n", pass}, // as the router sees it
		{"bypass prefix, without the slash", "bypass", "POST /hooks", "Sec-Fetch-Site: cross-site\r\n", refuse},
		{"bypass prefix, longer name", "bypass", "POST /hooksx/a", "Sec-Fetch-Site: cross-site\r\n", refuse},
		{"bypass prefix, dot-dot", "bypass", "POST /hooks/../admin", "Sec-Fetch-Site: cross-site\r\n", refuse},
		{"bypass prefix, encoded dot-dot", "bypass", "POST /hooks/%2e%2e/admin", "Sec-Fetch-Site: cross-site\r\n", refuse},
		{"bypass prefix, dot", "bypass", "POST /hooks/./a", "Sec-Fetch-Site: cross-site\r\n", refuse},
		{"bypass prefix, doubled slash", "bypass", "POST /hooks//a", "Sec-Fetch-Site: cross-site\r\n", refuse},
		{"bypass prefix, last segment dot-dot", "bypass", "POST /hooks/..", "Sec-Fetch-Site: cross-site\r\n", refuse},
		{"bypass with method", "bypass", "POST /only-post", "Sec-Fetch-Site: cross-site\r\n", pass},
		{"bypass with method, other method", "bypass", "PUT /only-post", "Sec-Fetch-Site: cross-site\r\n", refuse},
		{"bypass, path with a space", "bypass", "POST /a%20b", "Sec-Fetch-Site: cross-site\r\n", pass},
		{"bypass, other path", "bypass", "POST /admin", "Sec-Fetch-Site: cross-site\r\n", refuse},
		{"bypass, other path, old browser", "bypass", "POST /admin", "Origin: https://evil.example\r\n", refuse},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			line := tc.req
			if line == "" {
				line = "POST /"
			}
			select {
			case <-ran:
			default:
			}
			c := dialRaw(t, addrs[tc.policy])
			c.Send(line + " HTTP/1.1\r\nHost: h\r\n" + tc.fields + "Content-Length: 0\r\n\r\n")
			method, _, _ := strings.Cut(line, " ")
			resp, body := c.Response(method)
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d (%q)", resp.StatusCode, tc.status, body)
			}
			select {
			case <-ran:
				if tc.status != pass {
					t.Fatal("the handler ran for a refused request")
				}
			default:
				if tc.status == pass {
					t.Fatal("the handler did not run")
				}
			}
			if tc.status == refuse && body != "403 Forbidden: cross-origin request refused\n" &&
				body != "403 Forbidden: cross-origin request refused: its Origin is not this host\n" {
				t.Errorf("body %q", body)
			}
		})
	}
}

// TestCrossOriginHosts: Origin against Host with ports and IPv6 literals, compared whole.
func TestCrossOriginHosts(t *testing.T) {
	_, addr := coretest.Serve(t, middleware.CrossOrigin(middleware.CrossOriginOptions{})(func(c *core.Ctx) {
		c.WriteString("ok")
	}), core.Options{})
	cases := []struct {
		host, origin string
		status       int
	}{
		{"h:8080", "http://h:8080", 200},
		{"h:8080", "http://h", 403},
		{"h:8080", "http://h:8081", 403},
		{"h", "http://h:80", 403}, // browsers leave the default port out; a value that has it is not the Host
		{"[::1]:8080", "http://[::1]:8080", 200},
		{"[::1]:8080", "http://[::1]:8081", 403},
		{"127.0.0.1", "http://127.0.0.1", 200},
		{"Example.COM", "https://example.com", 200},
	}
	c := dialRaw(t, addr)
	for _, tc := range cases {
		c.Send("POST / HTTP/1.1\r\nHost: " + tc.host + "\r\nOrigin: " + tc.origin + "\r\nContent-Length: 0\r\n\r\n")
		if resp, body := c.Response("POST"); resp.StatusCode != tc.status {
			t.Errorf("Host %s, Origin %s: status %d, want %d (%q)", tc.host, tc.origin, resp.StatusCode, tc.status, body)
		}
	}
}

// TestCrossOriginError: the refusal is written by the ErrorFunc given, with 403 and the
// message.
func TestCrossOriginError(t *testing.T) {
	_, addr := coretest.Serve(t, middleware.CrossOrigin(middleware.CrossOriginOptions{Error: middleware.JSONError})(func(c *core.Ctx) {
		c.WriteString("ok")
	}), core.Options{})
	c := dialRaw(t, addr)
	for _, tc := range []struct{ fields, want string }{
		{"Sec-Fetch-Site: cross-site\r\n", `{"error":"cross-origin request refused"}`},
		{"Origin: https://evil.example\r\n", `{"error":"cross-origin request refused: its Origin is not this host"}`},
	} {
		c.Send("POST / HTTP/1.1\r\nHost: h\r\n" + tc.fields + "Content-Length: 0\r\n\r\n")
		resp, body := c.Response("POST")
		if resp.StatusCode != 403 || strings.TrimSpace(body) != tc.want || resp.Header.Get("Content-Type") != "application/json" {
			t.Errorf("%q: %d %q %q, want 403 %s as JSON", tc.fields, resp.StatusCode, resp.Header.Get("Content-Type"), body, tc.want)
		}
	}
}

// TestCrossOriginOptions: a malformed trusted origin or bypass pattern panics when CrossOrigin
// is built, naming it, saying why and how to write it; well-formed ones build.
func TestCrossOriginOptions(t *testing.T) {
	badOrigins := map[string]string{
		"https://app.example/":     "path",
		"https://app.example/x":    "path",
		"https://app.example?x=1":  "query",
		"https://app.example?":     "query",
		"https://app.example#top":  "fragment",
		"https://app.example#":     "fragment",
		"app.example":              "no scheme",
		"//app.example":            "no scheme",
		"mailto:a@app.example":     "no scheme",
		"https://":                 "no host",
		"https://:8080":            "no host",
		"https://user@app.example": "user information",
		"https://app.example:443":  "default port",
		"http://app.example:80":    "default port",
		"https://app.example:":     "empty port",
		"https://app.example:abc":  "not a URL",
		"https://app example":      "not a URL",
		"":                         "no scheme",
		"*":                        "every site",
		"null":                     "sandboxed iframes",
		"NULL":                     "sandboxed iframes",
	}
	for s, why := range badOrigins {
		msg := catchPanic(func() { middleware.CrossOrigin(middleware.CrossOriginOptions{TrustedOrigins: []string{s}}) })
		if !strings.Contains(msg, "trusted origin "+`"`+s+`"`) || !strings.Contains(msg, why) || !strings.Contains(msg, "as browsers send them") {
			t.Errorf("trusted origin %q: panic %q, want one naming it and saying %q", s, msg, why)
		}
	}
	badPatterns := map[string]string{
		"hooks":         `does not start with "/"`,
		"":              `does not start with "/"`,
		"*":             `does not start with "/"`,
		"/hooks*":       `"*" may only end a pattern`,
		"/*/x":          `"*" may only end a pattern`,
		"/a/*/":         `"*" may only end a pattern`,
		"/a/**":         `"*" may only end a pattern`,
		"/a?x=1":        "without a query",
		"/a#f":          "without a query or fragment",
		"/a/../b":       `".", ".." or empty segment`,
		"/a/./b":        `".", ".." or empty segment`,
		"//a":           `".", ".." or empty segment`,
		"/a/..":         `".", ".." or empty segment`,
		"/a//*":         `".", ".." or empty segment`,
		"GET /a":        "GET requests always pass",
		"HEAD /a":       "HEAD requests always pass",
		"OPTIONS /a/*":  "OPTIONS requests always pass",
		" /a":           "is not a method",
		"PO(ST /a":      "is not a method",
		"POST  /a":      `does not start with "/"`,
		"POST a":        `does not start with "/"`,
		"POST /a/../b/": `".", ".." or empty segment`,
	}
	for s, why := range badPatterns {
		msg := catchPanic(func() { middleware.CrossOrigin(middleware.CrossOriginOptions{Bypass: []string{s}}) })
		if !strings.Contains(msg, "bypass pattern "+`"`+s+`"`) || !strings.Contains(msg, why) || !strings.Contains(msg, `"/hooks/*"`) {
			t.Errorf("bypass %q: panic %q, want one naming it and saying %q", s, msg, why)
		}
	}
	good := middleware.CrossOriginOptions{
		TrustedOrigins: []string{"https://app.example", "http://localhost:8080", "https://[::1]:8443",
			"HTTPS://APP.EXAMPLE", "chrome-extension://abcdefghijklmnop", "https://app.example:8443", "http://app.example:443"},
		Bypass: []string{"/", "/*", "/a", "/a/", "/a/*", "POST /a/*", "PURGE /x", "/a b", "/a.b/c..d/.e"},
	}
	if msg := catchPanic(func() { middleware.CrossOrigin(good) }); msg != "" {
		t.Errorf("well-formed options: panic %q", msg)
	}
	if msg := catchPanic(func() { middleware.CrossOrigin(middleware.CrossOriginOptions{}) }); msg != "" {
		t.Errorf("zero options: panic %q", msg)
	}
}
