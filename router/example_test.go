package router_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/router"
)

// start serves h on a free loopback port and returns its base URL and a stop function.
func start(h core.Handler) (string, func()) {
	s := core.NewServer(h, core.Options{Addr: "127.0.0.1:0"})
	if err := s.Listen(); err != nil {
		panic(err)
	}
	go s.ListenAndServe()
	return "http://" + s.Addr().String(), func() { s.Shutdown(context.Background()) }
}

// get prints the status line of a request (redirects are not followed), the headers named, and
// the body.
func get(method, url string, headers ...string) {
	req, _ := http.NewRequest(method, url, nil)
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}
	resp, err := client.Do(req)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	fmt.Print(resp.Status)
	for _, h := range headers {
		fmt.Printf(" %s: %s", h, resp.Header.Get(h))
	}
	if len(b) > 0 {
		fmt.Printf(" %q", b)
	}
	fmt.Println()
}

func Example() {
	r := router.New()
	r.GET("/users/:id", func(c *core.Ctx) {
		c.WriteString("user " + c.Param("id"))
	})
	r.GET("/files/*path", func(c *core.Ctx) {
		c.WriteString("file " + c.Param("path"))
	})
	url, stop := start(r.Handler())
	defer stop()

	get("GET", url+"/users/42")
	get("GET", url+"/files/docs/guide.md")
	get("HEAD", url+"/users/42", "Content-Length")
	get("DELETE", url+"/users/42", "Allow")
	get("GET", url+"/Users/42/", "Location")
	get("GET", url+"/nowhere")
	// Output:
	// 200 OK "user 42"
	// 200 OK "file /docs/guide.md"
	// 200 OK Content-Length: 7
	// 405 Method Not Allowed Allow: GET, HEAD, OPTIONS "405 method not allowed\n"
	// 301 Moved Permanently Location: /users/42
	// 404 Not Found "404 page not found\n"
}

// Middleware wraps routes once, when Handler is called: the first Use is the outermost, the
// router's outside the group's.
func ExampleRouter_Use() {
	tag := func(name string) func(core.Handler) core.Handler {
		return func(next core.Handler) core.Handler {
			return func(c *core.Ctx) {
				c.WriteString(name + "(")
				next(c)
				c.WriteString(")")
			}
		}
	}
	r := router.New()
	r.Use(tag("log"), tag("auth"))
	api := r.Group("/api")
	api.Use(tag("json"))
	api.GET("/status", func(c *core.Ctx) { c.WriteString("ok") })
	url, stop := start(r.Handler())
	defer stop()

	get("GET", url+"/api/status")
	get("GET", url+"/missing")
	// Output:
	// 200 OK "log(auth(json(ok)))"
	// 404 Not Found "log(auth(404 page not found\n))"
}

// A group's prefix may hold parameters; its routes see them like their own.
func ExampleRouter_Group() {
	r := router.New()
	repo := r.Group("/repos/:owner/:repo")
	repo.GET("/issues/:number", func(c *core.Ctx) {
		for _, name := range []string{"owner", "repo", "number"} {
			fmt.Fprintf(c, "%s=%s ", name, c.Param(name))
		}
	})
	url, stop := start(r.Handler())
	defer stop()

	get("GET", url+"/repos/dwellhttp/dwell/issues/7")
	// Output:
	// 200 OK "owner=dwellhttp repo=dwell number=7 "
}

// The automatic OPTIONS reply lists what a path allows; GlobalOPTIONS adds to it, here for a
// CORS preflight.
func ExampleRouter_GlobalOPTIONS() {
	r := router.New()
	r.GET("/items", func(c *core.Ctx) {})
	r.POST("/items", func(c *core.Ctx) {})
	r.GlobalOPTIONS = func(c *core.Ctx) {
		c.SetHeader("Access-Control-Allow-Methods", c.ResponseHeader("Allow"))
		c.SetStatus(204)
	}
	url, stop := start(r.Handler())
	defer stop()

	get("OPTIONS", url+"/items", "Allow", "Access-Control-Allow-Methods")
	// Output:
	// 204 No Content Allow: GET, HEAD, OPTIONS, POST Access-Control-Allow-Methods: GET, HEAD, OPTIONS, POST
}

// A route without parameters may sit beside a parameter or a catch-all at the same position,
// and wins for its own path.
func Example_staticBesideParam() {
	r := router.New()
	r.GET("/todos/:id", func(c *core.Ctx) { c.WriteString("todo " + c.Param("id")) })
	r.GET("/todos/changes", func(c *core.Ctx) { c.WriteString("changes") })
	r.GET("/static/*path", func(c *core.Ctx) { c.WriteString("file " + c.Param("path")) })
	r.GET("/static/app.css", func(c *core.Ctx) { c.WriteString("the stylesheet") })
	url, stop := start(r.Handler())
	defer stop()

	get("GET", url+"/todos/changes")
	get("GET", url+"/todos/42")
	get("GET", url+"/static/app.css")
	get("GET", url+"/static/app.js")
	// Output:
	// 200 OK "changes"
	// 200 OK "todo 42"
	// 200 OK "the stylesheet"
	// 200 OK "file /app.js"
}

// A group serves its own prefix through the empty pattern.
func ExampleRouter_Group_ownPrefix() {
	r := router.New()
	todos := r.Group("/todos")
	todos.GET("", func(c *core.Ctx) { c.WriteString("all todos") })
	todos.GET("/:id", func(c *core.Ctx) { c.WriteString("todo " + c.Param("id")) })
	url, stop := start(r.Handler())
	defer stop()

	get("GET", url+"/todos")
	get("GET", url+"/todos/7")
	get("GET", url+"/todos/", "Location")
	// Output:
	// 200 OK "all todos"
	// 200 OK "todo 7"
	// 301 Moved Permanently Location: /todos
}

// An Any route serves every method, extension methods included, after the routes registered
// for the request's own method.
func ExampleRouter_Any() {
	r := router.New()
	r.Any("/dav/*path", func(c *core.Ctx) { c.WriteString(c.Method() + " " + c.Param("path")) })
	r.GET("/dav/status", func(c *core.Ctx) { c.WriteString("up") })
	url, stop := start(r.Handler())
	defer stop()

	get("PROPFIND", url+"/dav/notes/a.txt")
	get("DELETE", url+"/dav/status")
	get("GET", url+"/dav/status")
	// Output:
	// 200 OK "PROPFIND /notes/a.txt"
	// 200 OK "DELETE /status"
	// 200 OK "up"
}

// Routes with parameters that httprouter's tree cannot hold together panic at registration,
// naming both routes and the way out.
func ExampleRouter_Handle_conflict() {
	defer func() {
		fmt.Println(strings.ReplaceAll(fmt.Sprint(recover()), "; ", ";\n"))
	}()
	r := router.New()
	r.GET("/users/:id", func(c *core.Ctx) {})
	r.GET("/users/:name/posts", func(c *core.Ctx) {})
	// Output:
	// dwell: route conflict: GET /users/:name/posts conflicts with GET /users/:id, registered earlier: the parameters :name and :id sit at the same position (after /users/) under different names;
	// use one name in both routes
}
