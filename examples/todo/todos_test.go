package main

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/dwellhttp/dwell/core/coretest"
)

// TestTodos: the life of todos through every route of the list, in order, and the answers for
// todos and paths that do not exist.
func TestTodos(t *testing.T) {
	url, _, _ := testApp(t, config{})
	steps := []struct {
		method, path, body string
		status             int
		want               string // the body, exactly, or the error's text when it starts "error: "
		location           string
	}{
		{"GET", "/todos", "", 200, "[]\n", ""},
		{"POST", "/todos", `{"title":"write tests"}`, 201, `{"id":1,"title":"write tests","done":false}` + "\n", "/todos/1"},
		{"POST", "/todos", `{"title":"ship","done":true}`, 201, `{"id":2,"title":"ship","done":true}` + "\n", "/todos/2"},
		{"GET", "/todos", "", 200, `[{"id":1,"title":"write tests","done":false},{"id":2,"title":"ship","done":true}]` + "\n", ""},
		{"GET", "/todos/1", "", 200, `{"id":1,"title":"write tests","done":false}` + "\n", ""},
		{"PUT", "/todos/1", `{"title":"write more tests","done":true}`, 200, `{"id":1,"title":"write more tests","done":true}` + "\n", ""},
		{"GET", "/todos/1", "", 200, `{"id":1,"title":"write more tests","done":true}` + "\n", ""},
		{"DELETE", "/todos/2", "", 204, "", ""},
		{"GET", "/todos", "", 200, `[{"id":1,"title":"write more tests","done":true}]` + "\n", ""},
		{"GET", "/todos/2", "", 404, "error: no todo 2", ""},
		{"PUT", "/todos/2", `{"title":"x"}`, 404, "error: no todo 2", ""},
		{"DELETE", "/todos/2", "", 404, "error: no todo 2", ""},
		{"GET", "/todos/abc", "", 404, `error: no todo "abc"`, ""},
		{"GET", "/todos/-1", "", 404, `error: no todo "-1"`, ""},
		{"GET", "/nowhere", "", 404, "error: no such resource", ""},
		{"PATCH", "/todos/1", `{}`, 405, "error: method not allowed; see the Allow field", ""},
		{"POST", "/todos/1", `{}`, 405, "error: method not allowed; see the Allow field", ""},
	}
	for _, s := range steps {
		fields := []string{}
		if s.body != "" {
			fields = append(fields, jsonType)
		}
		resp, body := do(t, s.method, url+s.path, s.body, fields...)
		if resp.StatusCode != s.status {
			t.Fatalf("%s %s: %d %q, want %d", s.method, s.path, resp.StatusCode, body, s.status)
		}
		if msg, ok := strings.CutPrefix(s.want, "error: "); ok {
			if got := errorOf(t, resp, body); got != msg {
				t.Fatalf("%s %s: error %q, want %q", s.method, s.path, got, msg)
			}
		} else if body != s.want || s.want != "" && resp.Header.Get("Content-Type") != "application/json" {
			t.Fatalf("%s %s: %q %q, want %q", s.method, s.path, resp.Header.Get("Content-Type"), body, s.want)
		}
		if got := resp.Header.Get("Location"); got != s.location {
			t.Fatalf("%s %s: Location %q, want %q", s.method, s.path, got, s.location)
		}
		if s.status == 405 && resp.Header.Get("Allow") == "" {
			t.Fatalf("%s %s: 405 without Allow", s.method, s.path)
		}
	}
}

// TestTodoErrors: what a client can get wrong in a body, each answered with its status and a
// JSON error that says what is wrong and where.
func TestTodoErrors(t *testing.T) {
	url, _, logs := testApp(t, config{maxBody: 100})
	if resp, _ := do(t, "POST", url+"/todos", `{"title":"a"}`, jsonType); resp.StatusCode != 201 {
		t.Fatalf("setup: %d", resp.StatusCode)
	}
	cases := []struct {
		name, method, path, body string
		fields                   []string
		status                   int
		want                     string // a part of the error
	}{
		{"bad JSON", "POST", "/todos", `{"title":}`, []string{jsonType}, 400, "malformed JSON at byte offset 10"},
		{"cut short", "POST", "/todos", `{"title":"a"`, []string{jsonType}, 400, "cut short"},
		{"unknown field", "POST", "/todos", `{"title":"a","colour":"red"}`, []string{jsonType}, 400, `JSON field "colour" is unknown`},
		{"wrong type", "POST", "/todos", `{"title":"a","done":"yes"}`, []string{jsonType}, 400, `JSON field "done": got string, want boolean`},
		{"no title", "POST", "/todos", `{"done":true}`, []string{jsonType}, 400, `"title" must be a non-empty string`},
		{"blank title", "PUT", "/todos/1", `{"title":"  "}`, []string{jsonType}, 400, `"title" must be a non-empty string`},
		{"empty body", "POST", "/todos", "", []string{jsonType}, 400, "request body is empty"},
		{"not JSON", "POST", "/todos", `title=a`, []string{"Content-Type: application/x-www-form-urlencoded"}, 415, "is not JSON"},
		{"no type", "PUT", "/todos/1", `{"title":"a"}`, nil, 415, "is not JSON"},
		{"too large", "POST", "/todos", `{"title":"` + strings.Repeat("x", 100) + `"}`, []string{jsonType, "X-Request-Id: big-1"}, 413, "request body over 100 bytes"},
		{"too large, chunked", "PUT", "/todos/1", "chunked", []string{jsonType, "X-Request-Id: big-2"}, 413, "request body over 100 bytes"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			body := tc.body
			if body == "chunked" {
				body = ""
			}
			resp, got := doBody(t, tc.method, url+tc.path, body, tc.body == "chunked", tc.fields...)
			if resp.StatusCode != tc.status || !strings.Contains(errorOf(t, resp, got), tc.want) {
				t.Fatalf("got %d %q, want %d containing %q", resp.StatusCode, got, tc.status, tc.want)
			}
			if tc.status == 413 {
				id := resp.Header.Get("X-Request-Id")
				if !strings.HasPrefix(id, "big-") {
					t.Fatalf("413 with X-Request-Id %q", id)
				}
				m := logs.find(t, func(m map[string]any) bool { return m["request_id"] == id })
				if m["status"] != 413.0 || m["path"] != tc.path || m["method"] != tc.method {
					t.Fatalf("logged %v", m)
				}
			}
		})
	}
	// Nothing was changed by the refused requests.
	if _, body := do(t, "GET", url+"/todos", ""); body != `[{"id":1,"title":"a","done":false}]`+"\n" {
		t.Fatalf("todos after the errors: %s", body)
	}
}

// TestListCompressed: a large list asked for with Accept-Encoding: gzip comes compressed, with
// Vary, and decodes to the same JSON.
func TestListCompressed(t *testing.T) {
	url, _, _ := testApp(t, config{})
	for i := range 100 {
		title, _ := json.Marshal(strings.Repeat("todo ", i%7+1))
		if resp, _ := do(t, "POST", url+"/todos", `{"title":`+string(title)+`}`, jsonType); resp.StatusCode != 201 {
			t.Fatal(resp.Status)
		}
	}
	plain, want := do(t, "GET", url+"/todos", "")
	zipped, body := do(t, "GET", url+"/todos", "", "Accept-Encoding: gzip")
	if plain.Header.Get("Content-Encoding") != "" || zipped.Header.Get("Content-Encoding") != "gzip" {
		t.Fatalf("Content-Encoding %q and %q", plain.Header.Get("Content-Encoding"), zipped.Header.Get("Content-Encoding"))
	}
	for _, resp := range []*http.Response{plain, zipped} {
		if vary := strings.Join(resp.Header.Values("Vary"), ", "); !strings.Contains(vary, "Accept-Encoding") {
			t.Fatalf("Vary %q", vary)
		}
	}
	if got := gunzip(t, body); got != want || len(body) >= len(want)/2 {
		t.Fatalf("%d compressed bytes decode to %d, want the %d of the plain list", len(body), len(got), len(want))
	}
	var list []todo
	if err := json.Unmarshal([]byte(want), &list); err != nil || len(list) != 100 {
		t.Fatalf("%d todos, %v", len(list), err)
	}
}

// TestTitleBound: a title over maxTitle bytes is refused, whatever the body limit allows: each
// change is kept in the log and in the topic's memory.
func TestTitleBound(t *testing.T) {
	a, _ := newTestApp(t, config{})
	c := coretest.NewClient(t, a.handler(), serverOptions())
	a.serve(c.Server())
	for _, tc := range []struct {
		n    int
		want int
	}{{maxTitle, 201}, {maxTitle + 1, 400}} {
		r := coretest.NewRequest("POST", "/todos", strings.NewReader(`{"title":"`+strings.Repeat("x", tc.n)+`"}`))
		r.Header.Set("Content-Type", "application/json")
		if resp := c.Do(r); resp.StatusCode != tc.want {
			t.Errorf("a title of %d bytes: %d, want %d", tc.n, resp.StatusCode, tc.want)
		}
	}
}
