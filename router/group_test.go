package router

import (
	"strings"
	"testing"
)

// TestGroupOwnPrefix: the empty pattern registers a group's prefix itself, "/" the prefix with
// a trailing slash; both sit beside the group's routes with parameters.
func TestGroupOwnPrefix(t *testing.T) {
	r := New()
	todos := r.Group("/todos")
	todos.GET("", reply("list"))
	todos.POST("", reply("create"))
	todos.GET("/:id", reply("todo"))
	todos.GET("/changes", reply("changes"))
	dir := r.Group("/dir/")
	dir.GET("/", reply("dir"))
	user := r.Group("/users/:id")
	user.GET("", reply("user"))
	user.Group("/posts").GET("", reply("posts"))
	cl := dial(t, serve(t, r))
	for _, tc := range []struct {
		method, target string
		code           int
		body           string
		location       string
	}{
		{"GET", "/todos", 200, "list", ""},
		{"POST", "/todos", 200, "create", ""},
		{"GET", "/todos/7", 200, "todo id=7", ""},
		{"GET", "/todos/changes", 200, "changes", ""},
		{"GET", "/todos/", 301, "", "/todos"},
		{"DELETE", "/todos", 405, "405 method not allowed\n", ""},
		{"GET", "/dir/", 200, "dir", ""},
		{"GET", "/dir", 301, "", "/dir/"},
		{"GET", "/users/7", 200, "user id=7", ""},
		{"GET", "/users/7/posts", 200, "posts id=7", ""},
	} {
		resp, body := cl.do(tc.method, tc.target)
		if resp.StatusCode != tc.code || body != tc.body || resp.Header.Get("Location") != tc.location {
			t.Errorf("%s %s: %d %q %q, want %d %q %q", tc.method, tc.target, resp.StatusCode, body,
				resp.Header.Get("Location"), tc.code, tc.body, tc.location)
		}
	}
}

// TestGroupPatterns: a pattern in a group begins with '/' or is empty; the root has no prefix
// to serve, so an empty pattern there is invalid.
func TestGroupPatterns(t *testing.T) {
	r := New()
	for name, tc := range map[string]struct {
		f    func()
		want string
	}{
		"group, no slash": {func() { r.Group("/api").GET("x", nop) },
			"dwell: invalid route pattern GET /apix: a pattern in a group must begin with '/', or be empty for the group's own prefix"},
		"router, empty": {func() { r.GET("", nop) },
			"dwell: invalid route pattern GET : a pattern must begin with '/'"},
		"root group, empty": {func() { r.Group("/").GET("", nop) },
			"dwell: invalid route pattern GET : a pattern must begin with '/'"},
		"Any, no slash": {func() { r.Any("x", nop) },
			"dwell: invalid route pattern Any x: a pattern must begin with '/'"},
		"Any, nil handler": {func() { r.Any("/x", nil) }, "dwell: nil handler for route Any /x"},
	} {
		if msg := catchPanic(tc.f); !strings.Contains(msg, tc.want) {
			t.Errorf("%s: panic %q, want %q", name, msg, tc.want)
		}
	}
}
