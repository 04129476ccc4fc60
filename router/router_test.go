package router

import (
	"testing"

	"github.com/dwellhttp/dwell/core"
)

// testRouter is the table the routing tests run against.
func testRouter() *Router {
	r := New()
	r.GET("/", reply("root"))
	r.GET("/users", reply("users"))
	r.POST("/users", reply("create"))
	r.GET("/users/:id", reply("user"))
	r.PUT("/users/:id", reply("put"))
	r.DELETE("/users/:id", reply("delete"))
	r.GET("/users/:id/posts/:post", reply("post"))
	r.GET("/files/*path", reply("files"))
	r.GET("/about/", reply("about"))
	r.GET("/Contact", reply("contact"))
	r.GET("/v/:ver/Docs", reply("docs"))
	r.GET("/sp ace/x", reply("space"))
	r.HEAD("/only-head", func(c *core.Ctx) { c.SetHeader("X-Route", "only-head") })
	r.OPTIONS("/opts", reply("opts"))
	r.PATCH("/opts", reply("patch"))
	return r
}

func TestRouting(t *testing.T) {
	cl := dial(t, serve(t, testRouter()))
	for _, tc := range []struct {
		name, method, target string
		code                 int
		body                 string
		header, value        string // a response header to check
	}{
		{"root", "GET", "/", 200, "root", "", ""},
		{"static", "GET", "/users", 200, "users", "", ""},
		{"static by method", "POST", "/users", 200, "create", "", ""},
		{"param", "GET", "/users/42", 200, "user id=42", "", ""},
		{"param decoded", "GET", "/users/a%20b", 200, "user id=a b", "", ""},
		{"param by method", "DELETE", "/users/42", 200, "delete id=42", "", ""},
		{"two params", "GET", "/users/42/posts/7", 200, "post id=42 post=7", "", ""},
		{"catch-all", "GET", "/files/a/b.txt", 200, "files path=/a/b.txt", "", ""},
		{"catch-all root", "GET", "/files/", 200, "files path=/", "", ""},
		{"query ignored", "GET", "/users/42?x=1", 200, "user id=42", "", ""},
		{"not found", "GET", "/nope", 404, "404 page not found\n", "Content-Type", "text/plain; charset=utf-8"},
		{"not found below param", "GET", "/users/42/nope", 404, "404 page not found\n", "", ""},
		{"405", "PATCH", "/users/42", 405, "405 method not allowed\n", "Allow", "DELETE, GET, HEAD, OPTIONS, PUT"},
		{"405 static", "DELETE", "/users", 405, "405 method not allowed\n", "Allow", "GET, HEAD, OPTIONS, POST"},
		{"405 head only", "GET", "/only-head", 405, "405 method not allowed\n", "Allow", "HEAD, OPTIONS"},
		{"OPTIONS automatic", "OPTIONS", "/users/42", 200, "", "Allow", "DELETE, GET, HEAD, OPTIONS, PUT"},
		{"OPTIONS route", "OPTIONS", "/opts", 200, "opts", "", ""},
		{"OPTIONS *", "OPTIONS", "*", 200, "", "Allow", "DELETE, GET, HEAD, OPTIONS, PATCH, POST, PUT"},
		{"OPTIONS unknown path", "OPTIONS", "/nope", 404, "404 page not found\n", "", ""},
		{"HEAD falls back to GET", "HEAD", "/users/42", 200, "", "Content-Length", "10"},
		{"HEAD route", "HEAD", "/only-head", 200, "", "X-Route", "only-head"},
		{"slash removed", "GET", "/users/", 301, "", "Location", "/users"},
		{"slash removed, param", "GET", "/users/42/", 301, "", "Location", "/users/42"},
		{"slash added", "GET", "/about", 301, "", "Location", "/about/"},
		{"slash kept query", "GET", "/users/42/?x=1&y", 301, "", "Location", "/users/42?x=1&y"},
		{"slash HEAD", "HEAD", "/users/", 301, "", "Location", "/users"},
		{"slash POST 308", "POST", "/users/", 308, "", "Location", "/users"},
		{"slash PUT 308", "PUT", "/users/42/", 308, "", "Location", "/users/42"},
		{"fixed case", "GET", "/contact", 301, "", "Location", "/Contact"},
		{"fixed case, param kept", "GET", "/USERS/Bob", 301, "", "Location", "/users/Bob"},
		{"fixed case, literal after param", "GET", "/V/2/docs", 301, "", "Location", "/v/2/Docs"},
		{"fixed dot-dot", "GET", "/users/../users/42", 301, "", "Location", "/users/42"},
		{"fixed double slash", "GET", "/users//42", 301, "", "Location", "/users/42"},
		{"fixed leading slashes", "GET", "//users/42", 301, "", "Location", "/users/42"},
		{"fixed and slash", "GET", "/CONTACT/", 301, "", "Location", "/Contact"},
		{"fixed catch-all", "GET", "/FILES/A/b", 301, "", "Location", "/files/A/b"},
		{"fixed POST 308", "POST", "/USERS", 308, "", "Location", "/users"},
		{"fixed escapes again", "GET", "/SP%20ACE/x", 301, "", "Location", "/sp%20ace/x"},
		{"fixed HEAD uses GET routes", "HEAD", "/CONTACT", 301, "", "Location", "/Contact"},
		{"fixed doubled root", "GET", "//", 301, "", "Location", "/"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := cl.do(tc.method, tc.target)
			if resp.StatusCode != tc.code || body != tc.body {
				t.Errorf("%s %s: %d %q, want %d %q", tc.method, tc.target, resp.StatusCode, body, tc.code, tc.body)
			}
			if tc.header != "" {
				if got := resp.Header.Get(tc.header); got != tc.value {
					t.Errorf("%s %s: %s %q, want %q", tc.method, tc.target, tc.header, got, tc.value)
				}
			}
		})
	}
}
