package router_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/core/coretest"
	"github.com/dwellhttp/dwell/middleware"
	"github.com/dwellhttp/dwell/router"
)

// TestMissRefusal: with the server's WriteRefusal set (JSON here), the router's own 404 and
// 405 are written by it — the 405 keeping its Allow field — under the labels the access log
// and the metrics count them by, and the connection goes on; the automatic OPTIONS reply,
// the redirects and the application's own NotFound and MethodNotAllowed are as they were.
func TestMissRefusal(t *testing.T) {
	routes := func() *router.Router {
		r := router.New()
		r.GET("/todos/:id", func(c *core.Ctx) { c.WriteString("todo " + c.Param("id")) })
		r.PUT("/todos/:id", func(c *core.Ctx) {})
		return r
	}
	labels := make(chan string, 16)
	r := routes()
	r.Use(func(next core.Handler) core.Handler {
		return func(c *core.Ctx) {
			label := c.Seam().RouteLabel()
			c.OnDone(func(d core.Done) { labels <- fmt.Sprint(label, " ", d.Status, " ", d.Err) })
			next(c)
		}
	})
	_, addr := coretest.Serve(t, r.Handler(), core.Options{WriteRefusal: middleware.JSONRefusal})

	own := routes()
	own.NotFound = func(c *core.Ctx) { c.SetStatus(404); c.WriteString("own 404") }
	own.MethodNotAllowed = func(c *core.Ctx) { c.SetStatus(405); c.WriteString("own 405") }
	_, ownAddr := coretest.Serve(t, own.Handler(), core.Options{WriteRefusal: middleware.JSONRefusal})

	for _, tc := range []struct {
		name, addr, method, target string
		status                     int
		ctype, body, allow, loc    string
		label                      string
	}{
		{"404", addr, "GET", "/nowhere", 404, "application/json", `{"error":"page not found"}` + "\n", "", "", "(not found) 404 <nil>"},
		{"404 to HEAD", addr, "HEAD", "/nowhere", 404, "application/json", "", "", "", "(not found) 404 <nil>"},
		{"405", addr, "DELETE", "/todos/7", 405, "application/json", `{"error":"method not allowed"}` + "\n", "GET, HEAD, OPTIONS, PUT", "", "(method not allowed) 405 <nil>"},
		{"OPTIONS unchanged", addr, "OPTIONS", "/todos/7", 200, "", "", "GET, HEAD, OPTIONS, PUT", "", "(options) 200 <nil>"},
		{"redirect unchanged", addr, "GET", "/todos/7/", 301, "", "", "", "/todos/7", "(redirect) 301 <nil>"},
		{"a route", addr, "GET", "/todos/7", 200, "text/plain; charset=utf-8", "todo 7", "", "", "/todos/:id 200 <nil>"},
		{"own NotFound", ownAddr, "GET", "/nowhere", 404, "text/plain; charset=utf-8", "own 404", "", "", ""},
		{"own MethodNotAllowed", ownAddr, "DELETE", "/todos/7", 405, "text/plain; charset=utf-8", "own 405", "GET, HEAD, OPTIONS, PUT", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cn := coretest.Dial(t, tc.addr)
			for range 2 { // the same again on the kept connection
				cn.Send(tc.method + " " + tc.target + " HTTP/1.1\r\nHost: test\r\n\r\n")
				resp, body := cn.Response(tc.method)
				if resp.StatusCode != tc.status || body != tc.body || resp.Close {
					t.Fatalf("%d %q (close %v), want %d %q", resp.StatusCode, body, resp.Close, tc.status, tc.body)
				}
				h := resp.Header
				if h.Get("Content-Type") != tc.ctype || h.Get("Allow") != tc.allow || h.Get("Location") != tc.loc {
					t.Errorf("header %v", h)
				}
				if tc.label != "" {
					if got := coretest.Receive(t, "the response's Done", labels); got != tc.label {
						t.Errorf("label and Done %q, want %q", got, tc.label)
					}
				}
			}
		})
	}
}

// TestMissRefusalErr: the server's WriteRefusal is told which answer it writes
// (router.ErrNotFound, router.ErrMethodNotAllowed) and may read the request, whose route label
// is set; a WriteRefusal that panics leaves the router's plain text.
func TestMissRefusalErr(t *testing.T) {
	r := router.New()
	r.GET("/a", func(c *core.Ctx) {})
	writeRefusal := func(rf *core.Refusal) {
		switch {
		case rf.Ctx.Path() == "/panic":
			panic("in WriteRefusal")
		case errors.Is(rf.Err, router.ErrNotFound):
			fmt.Fprintf(rf, "not found: %s %s", rf.Ctx.Seam().RouteLabel(), rf.Ctx.Path())
		case errors.Is(rf.Err, router.ErrMethodNotAllowed):
			fmt.Fprintf(rf, "not allowed: %s %s", rf.Ctx.Seam().RouteLabel(), rf.Ctx.Method())
		}
	}
	_, addr := coretest.Serve(t, r.Handler(), core.Options{WriteRefusal: writeRefusal})
	cn := coretest.Dial(t, addr)
	for _, tc := range []struct{ method, target, body string }{
		{"GET", "/b", "not found: (not found) /b"},
		{"POST", "/a", "not allowed: (method not allowed) POST"},
		{"GET", "/panic", "404 page not found\n"},
	} {
		cn.Send(tc.method + " " + tc.target + " HTTP/1.1\r\nHost: test\r\n\r\n")
		resp, body := cn.Response(tc.method)
		if body != tc.body || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") {
			t.Errorf("%s %s: %d %q %v, want %q", tc.method, tc.target, resp.StatusCode, body, resp.Header, tc.body)
		}
	}
}

// A JSON API answers every error in JSON: the server's own refusals and the router's 404 and
// 405 alike, with no NotFound or MethodNotAllowed of its own.
func ExampleRouter_jsonRefusal() {
	r := router.New()
	r.GET("/todos/:id", func(c *core.Ctx) { c.WriteString(`{"id":` + c.Param("id") + `}`) })
	s := core.NewServer(r.Handler(), core.Options{Addr: "127.0.0.1:0", WriteRefusal: middleware.JSONRefusal})
	if err := s.Listen(); err != nil {
		panic(err)
	}
	go s.ListenAndServe()
	defer s.Shutdown(context.Background())
	url := "http://" + s.Addr().String()

	get("GET", url+"/todos/7")
	get("GET", url+"/users/7", "Content-Type")
	get("DELETE", url+"/todos/7", "Allow")
	// Output:
	// 200 OK "{\"id\":7}"
	// 404 Not Found Content-Type: application/json "{\"error\":\"page not found\"}\n"
	// 405 Method Not Allowed Allow: GET, HEAD, OPTIONS "{\"error\":\"method not allowed\"}\n"
}
