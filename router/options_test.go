package router

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/dwellhttp/dwell/core"
)

// TestReplyOptions: each field of the Router changes the reply it names.
func TestReplyOptions(t *testing.T) {
	type req struct {
		method, target string
		code           int
		body           string
		header, value  string
	}
	for _, tc := range []struct {
		name  string
		setup func(r *Router)
		reqs  []req
	}{
		{"NotFound", func(r *Router) {
			r.NotFound = func(c *core.Ctx) { c.SetStatus(404); c.WriteString("custom " + c.Path()) }
		}, []req{{"GET", "/nope", 404, "custom /nope", "", ""}}},
		{"MethodNotAllowed", func(r *Router) {
			r.MethodNotAllowed = func(c *core.Ctx) {
				c.SetStatus(405)
				c.WriteString("only " + c.ResponseHeader("Allow"))
			}
		}, []req{{"POST", "/users/1", 405, "only GET, HEAD, OPTIONS", "Allow", "GET, HEAD, OPTIONS"}}},
		{"HandleMethodNotAllowed off", func(r *Router) { r.HandleMethodNotAllowed = false },
			[]req{{"POST", "/users/1", 404, "404 page not found\n", "Allow", ""}}},
		{"GlobalOPTIONS", func(r *Router) {
			r.GlobalOPTIONS = func(c *core.Ctx) {
				c.SetHeader("Access-Control-Allow-Methods", c.ResponseHeader("Allow"))
				c.SetStatus(204)
			}
		}, []req{{"OPTIONS", "/users/1", 204, "", "Access-Control-Allow-Methods", "GET, HEAD, OPTIONS"}}},
		{"HandleOPTIONS off", func(r *Router) { r.HandleOPTIONS = false },
			[]req{{"OPTIONS", "/users/1", 405, "405 method not allowed\n", "Allow", "GET, HEAD"}}},
		{"RedirectTrailingSlash off", func(r *Router) { r.RedirectTrailingSlash = false },
			[]req{
				{"GET", "/users/1/", 404, "404 page not found\n", "", ""},
				{"GET", "/USERS/1/", 404, "404 page not found\n", "", ""},
				{"GET", "/USERS/1", 301, "", "Location", "/users/1"},
			}},
		{"RedirectFixedPath off", func(r *Router) { r.RedirectFixedPath = false },
			[]req{
				{"GET", "/USERS/1", 404, "404 page not found\n", "", ""},
				{"GET", "/users/1/", 301, "", "Location", "/users/1"},
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := New()
			r.GET("/users/:id", reply("user"))
			tc.setup(r)
			cl := dial(t, serve(t, r))
			for _, q := range tc.reqs {
				resp, body := cl.do(q.method, q.target)
				if resp.StatusCode != q.code || body != q.body {
					t.Errorf("%s %s: %d %q, want %d %q", q.method, q.target, resp.StatusCode, body, q.code, q.body)
				}
				if q.header != "" || q.value != "" {
					if got := resp.Header.Get(q.header); got != q.value {
						t.Errorf("%s %s: %s %q, want %q", q.method, q.target, q.header, got, q.value)
					}
				}
			}
		})
	}
}

// TestZeroRouter: a Router that is not made by New routes, with every automatic reply off.
func TestZeroRouter(t *testing.T) {
	var r Router
	r.GET("/a/:x", reply("a"))
	cl := dial(t, serve(t, &r))
	for _, q := range []struct {
		method, target string
		code           int
		body           string
	}{
		{"GET", "/a/1", 200, "a x=1"},
		{"HEAD", "/a/1", 200, ""},
		{"GET", "/a/1/", 404, "404 page not found\n"},
		{"GET", "/A/1", 404, "404 page not found\n"},
		{"POST", "/a/1", 404, "404 page not found\n"},
		{"OPTIONS", "/a/1", 404, "404 page not found\n"},
	} {
		resp, body := cl.do(q.method, q.target)
		if resp.StatusCode != q.code || body != q.body {
			t.Errorf("%s %s: %d %q, want %d %q", q.method, q.target, resp.StatusCode, body, q.code, q.body)
		}
	}
}

// TestNoRedirectToAnotherHost: a path whose trailing-slash twin starts with "//" would send
// the client to another host; the router never answers with such a Location.
func TestNoRedirectToAnotherHost(t *testing.T) {
	r1 := New()
	r1.GET("/:a/evil.example", reply("a"))
	r2 := New()
	r2.GET("/\\x/y", reply("backslash"))
	for r, targets := range map[*Router][]string{
		r1: {"//evil.example/", "//evil.example", "///evil.example/"},
		r2: {"/%5Cx/y/", "/%5CX/y"},
	} {
		cl := dial(t, serve(t, r))
		for _, target := range targets {
			resp, _ := cl.do("GET", target)
			loc := resp.Header.Get("Location")
			t.Logf("GET %s: %d %q", target, resp.StatusCode, loc)
			if strings.HasPrefix(loc, "//") || strings.HasPrefix(loc, "/\\") {
				t.Errorf("GET %s: Location %q", target, loc)
			}
		}
	}
}

// TestNoRedirectAcrossAnEncodedSlash: the redirects are worked out on the decoded path, where
// "a%2Fb" is "a/b"; a request with an encoded slash is not redirected (it would be sent to
// another resource, which a mounted handler reading the escaped path tells apart), and the
// rest still are.
func TestNoRedirectAcrossAnEncodedSlash(t *testing.T) {
	r := New()
	r.Mount("/m", http.HandlerFunc(func(w http.ResponseWriter, q *http.Request) {
		io.WriteString(w, q.URL.EscapedPath())
	}))
	r.GET("/files/*path", reply("files"))
	cl := dial(t, serve(t, r))
	if _, body := cl.do("GET", "/m/a%2Fb"); body != "/m/a%2Fb" {
		t.Fatalf("the mounted handler saw %q", body)
	}
	for target, want := range map[string]string{"/M/a%2Fb": "", "/M/a%2fb": "", "/M/a%20b": "/m/a%20b", "/Files/a%2Fb": "", "/Files/x": "/files/x"} {
		resp, _ := cl.do("GET", target)
		if loc := resp.Header.Get("Location"); loc != want || want == "" && resp.StatusCode != 404 {
			t.Errorf("GET %s: %d Location %q, want %q", target, resp.StatusCode, loc, want)
		}
	}
}

// TestHandlerFreezes: once Handler has been called, registering panics, and Handler returns
// the same handler.
func TestHandlerFreezes(t *testing.T) {
	r := New()
	g := r.Group("/g")
	r.GET("/", reply("root"))
	r.Handler()
	for name, f := range map[string]func(){
		"route":       func() { r.GET("/late", reply("late")) },
		"group route": func() { g.GET("/late", reply("late")) },
		"middleware":  func() { r.Use(func(h core.Handler) core.Handler { return h }) },
	} {
		if msg := catchPanic(f); !strings.Contains(msg, "after Handler was called") {
			t.Errorf("%s after Handler: panic %q", name, msg)
		}
	}
}
