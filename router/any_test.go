package router

import (
	"testing"

	"github.com/dwellhttp/dwell/core"
)

// TestAny: an Any route serves every method, the standard ones and extension methods alike,
// after the routes of the request's own method; it never yields a 405 or the automatic
// OPTIONS reply where it matches; redirects reach it.
func TestAny(t *testing.T) {
	r := New()
	r.Any("/proxy/*path", reply("proxy"))
	r.GET("/proxy/health", reply("health"))
	r.Any("/dav", func(c *core.Ctx) { c.WriteString("dav " + c.Method()) })
	r.Handle("PROPFIND", "/dav/special", reply("propfind"))
	r.GET("/items/:id", reply("item"))
	r.Any("/items/:id/raw", reply("raw"))
	r.Any("/both", reply("any both"))
	r.OPTIONS("/both", reply("options both"))
	g := r.Group("/g")
	g.Any("", reply("group"))
	cl := dial(t, serve(t, r))
	for _, tc := range []struct {
		method, target string
		code           int
		body           string
		header, value  string
	}{
		{"GET", "/proxy/a/b", 200, "proxy path=/a/b", "", ""},
		{"POST", "/proxy/a", 200, "proxy path=/a", "", ""},
		{"PUT", "/proxy/a", 200, "proxy path=/a", "", ""},
		{"PATCH", "/proxy/a", 200, "proxy path=/a", "", ""},
		{"DELETE", "/proxy/a", 200, "proxy path=/a", "", ""},
		{"TRACE", "/proxy/a", 200, "proxy path=/a", "", ""},
		{"HEAD", "/proxy/a", 200, "", "Content-Length", "13"},
		{"OPTIONS", "/proxy/a", 200, "proxy path=/a", "Allow", ""},
		{"PROPFIND", "/proxy/a", 200, "proxy path=/a", "", ""},
		{"MKCOL", "/proxy/", 200, "proxy path=/", "", ""},
		{"GET", "/proxy/health", 200, "health", "", ""},
		{"HEAD", "/proxy/health", 200, "", "Content-Length", "6"},
		{"POST", "/proxy/health", 200, "proxy path=/health", "", ""},
		{"PROPFIND", "/dav/special", 200, "propfind", "", ""},
		{"PROPFIND", "/dav", 200, "dav PROPFIND", "", ""},
		{"LOCK", "/dav", 200, "dav LOCK", "", ""},
		{"GET", "/dav", 200, "dav GET", "", ""},
		{"PUT", "/items/7/raw", 200, "raw id=7", "", ""},
		{"REPORT", "/items/7/raw", 200, "raw id=7", "", ""},
		{"GET", "/items/7", 200, "item id=7", "", ""},
		{"DELETE", "/items/7", 405, "405 method not allowed\n", "Allow", "GET, HEAD, OPTIONS"},
		{"PROPFIND", "/items/7", 405, "405 method not allowed\n", "Allow", "GET, HEAD, OPTIONS"},
		{"OPTIONS", "/items/7", 200, "", "Allow", "GET, HEAD, OPTIONS"},
		{"OPTIONS", "/both", 200, "options both", "", ""},
		{"DELETE", "/both", 200, "any both", "", ""},
		{"PUT", "/g", 200, "group", "", ""},
		{"PROPFIND", "/g", 200, "group", "", ""},
		{"PROPFIND", "/dav/", 308, "", "Location", "/dav"},
		{"PROPFIND", "/DAV", 308, "", "Location", "/dav"},
		{"GET", "/dav/", 301, "", "Location", "/dav"},
		{"POST", "/ITEMS/7/raw", 308, "", "Location", "/items/7/raw"},
		{"PUT", "/g/", 308, "", "Location", "/g"},
		{"OPTIONS", "*", 200, "", "Allow", "DELETE, GET, HEAD, OPTIONS, PATCH, POST, PROPFIND, PUT, TRACE"},
		{"PROPFIND", "/nowhere", 404, "404 page not found\n", "", ""},
	} {
		resp, body := cl.do(tc.method, tc.target)
		if resp.StatusCode != tc.code || body != tc.body {
			t.Errorf("%s %s: %d %q, want %d %q", tc.method, tc.target, resp.StatusCode, body, tc.code, tc.body)
		}
		if tc.header != "" || tc.value != "" {
			if got := resp.Header.Get(tc.header); got != tc.value {
				t.Errorf("%s %s: %s %q, want %q", tc.method, tc.target, tc.header, got, tc.value)
			}
		}
	}
}
