package router

import (
	"slices"
	"testing"

	"github.com/dwellhttp/dwell/core"
)

func TestParsePattern(t *testing.T) {
	for _, tc := range []struct {
		pattern string
		want    []token
	}{
		{"/", []token{{literal, "/"}}},
		{"/users/:id", []token{{literal, "/users/"}, {param, "id"}}},
		{"/users/:id/posts/:post", []token{{literal, "/users/"}, {param, "id"}, {literal, "/posts/"}, {param, "post"}}},
		{"/files/*path", []token{{literal, "/files/"}, {catchAll, "path"}}},
		{"/v:ver/x", []token{{literal, "/v"}, {param, "ver"}, {literal, "/x"}}},
	} {
		if checkPattern(tc.pattern) != "" {
			t.Errorf("%s: invalid: %s", tc.pattern, checkPattern(tc.pattern))
		}
		if got := parsePattern(tc.pattern); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.pattern, got, tc.want)
		}
	}
}

// TestMatchFold: the case-insensitive match keeps the pattern's spelling of literals and the
// request's spelling of parameter values.
func TestMatchFold(t *testing.T) {
	for _, tc := range []struct {
		pattern, path, want string
		ok                  bool
	}{
		{"/Contact", "/contact", "/Contact", true},
		{"/Contact", "/CONTACT", "/Contact", true},
		{"/Contact", "/contacts", "", false},
		{"/users/:id", "/USERS/Bob", "/users/Bob", true},
		{"/users/:id", "/users/", "", false},
		{"/users/:id", "/users/a/b", "", false},
		{"/users/:id/Posts", "/Users/7/posts", "/users/7/Posts", true},
		{"/files/*path", "/FILES/A/b", "/files/A/b", true},
		{"/files/*path", "/Files/", "/files/", true},
		{"/files/*path", "/files", "", false},
		{"/v:ver/Docs", "/V2/docs", "/v2/Docs", true},
		{"/straße", "/STRASSE", "", false}, // folds only between spellings of one length
		{"/Ünï", "/üNÏ", "/Ünï", true},
	} {
		got, ok := matchFold(parsePattern(tc.pattern), tc.path)
		if got != tc.want || ok != tc.ok {
			t.Errorf("%s against %s: %q %v, want %q %v", tc.path, tc.pattern, got, ok, tc.want, tc.ok)
		}
	}
}

// TestDispatchWithoutServer: dispatch sets parameters on the Ctx in route order and reports
// misses, HEAD falling back to GET.
func TestDispatchWithoutServer(t *testing.T) {
	r := New()
	var got string
	for _, rt := range apiRoutes {
		r.Handle(rt.method, rt.path, func(c *core.Ctx) {
			got = rt.method + " " + rt.path
			for k, v := range c.Params() {
				got += " " + k + "=" + v
			}
		})
	}
	r.Handler()
	for _, tc := range []struct{ method, path, want string }{
		{"GET", "/", "GET /"},
		{"HEAD", "/users/7", "GET /users/:id id=7"},
		{"PATCH", "/users/7", "PATCH /users/:id id=7"},
		{"GET", "/repos/a/b/issues/3/comments", "GET /repos/:owner/:repo/issues/:number/comments owner=a repo=b number=3"},
		{"GET", "/static/a/b.css", "GET /static/*filepath filepath=/a/b.css"},
		{"GET", "/nope", ""},
		{"POST", "/users/7", ""},
	} {
		var c core.Ctx
		got = ""
		hit := r.dispatch(&c, tc.method, tc.path)
		if got != tc.want || hit != (tc.want != "") {
			t.Errorf("%s %s: %v %q, want %q", tc.method, tc.path, hit, got, tc.want)
		}
	}
}
