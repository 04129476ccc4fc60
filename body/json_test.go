package body_test

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/dwellhttp/dwell/body"
	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/core/coretest"
)

// todoIn is what the JSON tests decode.
type todoIn struct {
	Title string `json:"title"`
	Done  bool   `json:"done"`
	Count uint8  `json:"count"`
	Items []struct {
		Title string `json:"title"`
	} `json:"items"`
}

// answerBodyError answers a body.Error with its status and message; any other error with 599
// and its text, so that a test sees which kind it was.
func answerBodyError(c *core.Ctx, err error) {
	var e *body.Error
	if errors.As(err, &e) {
		c.SetStatus(e.Status)
		c.WriteString(e.Error())
		return
	}
	c.SetStatus(599)
	c.WriteString(err.Error())
}

// TestReadJSON: ReadJSON's statuses and messages, for the cases a client gets wrong.
func TestReadJSON(t *testing.T) {
	_, addr := coretest.Serve(t, func(c *core.Ctx) {
		var in todoIn
		err := body.ReadJSON(c, &in, body.JSONOptions{Limit: 64, DisallowUnknownFields: c.Query("strict") != ""})
		if err != nil {
			answerBodyError(c, err)
			return
		}
		body.WriteJSON(c, 200, in)
	}, core.Options{})
	const js = "Content-Type: application/json\r\n"
	cases := []struct {
		name   string
		req    string
		status int
		want   string // the body, or a part of it
	}{
		{"ok", post("/", []byte(`{"title":"a","done":true}`), false, js), 200, `{"title":"a","done":true,"count":0,"items":null}`},
		{"ok chunked", post("/", []byte(`{"title":"a"}`), true, js), 200, `{"title":"a","done":false,"count":0,"items":null}`},
		{"white space after", post("/", []byte("{\"title\":\"a\"} \r\n"), false, js), 200, `"title":"a"`},
		{"charset utf-8", post("/", []byte(`{}`), false, "Content-Type: application/json; charset=UTF-8\r\n"), 200, `"title":""`},
		{"suffix +json", post("/", []byte(`{}`), false, "Content-Type: application/merge-patch+json\r\n"), 200, `"title":""`},
		{"unknown field ignored", post("/", []byte(`{"colour":"red"}`), false, js), 200, `"title":""`},
		{"unknown field refused", post("/?strict=1", []byte(`{"title":"a","colour":"red"}`), false, js), 400, `JSON field "colour" is unknown (byte offset 21)`},
		{"wrong type", post("/", []byte(`{"title":5}`), false, js), 400, `JSON field "title": got number, want string (byte offset 10)`},
		{"wrong type nested", post("/", []byte(`{"items":[{"title":true}]}`), false, js), 400, `JSON field "items.title": got boolean, want string`},
		{"out of range", post("/", []byte(`{"done":false,"count":-1}`), false, js), 400, `JSON field "count": got number -1 (out of range), want non-negative integer`},
		{"wrong type top", post("/", []byte(`[1]`), false, js), 400, `JSON value: got array, want object`},
		{"syntax", post("/", []byte(`{"title":}`), false, js), 400, "malformed JSON at byte offset 10: invalid character '}'"},
		{"cut short", post("/", []byte(`{"title":"a"`), false, js), 400, "JSON value cut short at byte offset 12"},
		{"data after", post("/", []byte(`{} {}`), false, js), 400, "data after the JSON value, at byte offset 3"},
		{"empty", post("/", nil, false, js), 400, "request body is empty"},
		{"empty, no type", post("/", nil, false, ""), 400, "request body is empty"},
		{"no type", post("/", []byte(`{}`), false, ""), 415, `Content-Type "" is not JSON`},
		{"text", post("/", []byte(`{}`), false, "Content-Type: text/plain\r\n"), 415, `Content-Type "text/plain" is not JSON`},
		{"form", post("/", []byte(`a=1`), false, "Content-Type: application/x-www-form-urlencoded\r\n"), 415, "want application/json"},
		{"latin1", post("/", []byte(`{}`), false, "Content-Type: application/json; charset=latin1\r\n"), 415, `charset "latin1"`},
		{"gzipped", post("/", []byte("\x1f\x8b"), false, js+"Content-Encoding: identity, gzip\r\n"), 415, `Content-Encoding "gzip" is not accepted; send the body unencoded`},
		{"over the limit", post("/", []byte(`{"title":"`+strings.Repeat("x", 60)+`"}`), false, js), 413, "request body over 64 bytes"},
		{"over the limit chunked", post("/", []byte(`{"title":"`+strings.Repeat("x", 60)+`"}`), true, js), 413, "request body over 64 bytes"},
		{"cut by the client", "POST / HTTP/1.1\r\nHost: h\r\n" + js + "Content-Length: 20\r\n\r\n{\"ti", 0, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := dial(t, addr)
			c.Send(tc.req)
			if tc.status == 0 {
				// The body never ends: the handler's error is the core's, and the client that
				// closes its side gets the server's 400 or nothing; both are fine, but never a
				// decoded value.
				c.CloseWrite()
				if b, err := c.R.ReadString('\n'); err == nil && strings.Contains(b, " 200 ") {
					t.Fatalf("status line %q for a truncated body", b)
				}
				return
			}
			resp, got := c.Response("POST")
			if resp.StatusCode != tc.status || !strings.Contains(got, tc.want) {
				t.Fatalf("got %d %q, want %d containing %q", resp.StatusCode, got, tc.status, tc.want)
			}
			if tc.status == 413 && !resp.Close {
				t.Fatal("a 413 without Connection: close: the unread body would follow")
			}
		})
	}
}

// TestReadJSONDeclaredTooLarge: a Content-Length over the limit is refused before the client
// sends the body: no 100 Continue, straight a 413.
func TestReadJSONDeclaredTooLarge(t *testing.T) {
	_, addr := coretest.Serve(t, func(c *core.Ctx) {
		var in todoIn
		answerBodyError(c, body.ReadJSON(c, &in, body.JSONOptions{Limit: 10}))
	}, core.Options{})
	c := dial(t, addr)
	c.Send("POST / HTTP/1.1\r\nHost: h\r\nContent-Type: application/json\r\nContent-Length: 11\r\nExpect: 100-continue\r\n\r\n")
	resp, got := c.Response("POST")
	if resp.StatusCode != 413 || got != "request body over 10 bytes" {
		t.Fatalf("got %d %q", resp.StatusCode, got)
	}
}

// TestReadJSONMessages: what the messages say of a number its field cannot hold, and of an
// unknown field whose name is also a key elsewhere.
func TestReadJSONMessages(t *testing.T) {
	type in struct {
		Meta  map[string]any `json:"meta"`
		Count int            `json:"count"`
	}
	_, addr := coretest.Serve(t, func(c *core.Ctx) {
		var v in
		answerBodyError(c, body.ReadJSON(c, &v, body.JSONOptions{DisallowUnknownFields: true}))
	}, core.Options{})
	const js = "Content-Type: application/json\r\n"
	for _, tc := range []struct{ body, want string }{
		{`{"count":1.5}`, `JSON field "count": got number 1.5 (not an integer), want integer (byte offset 12)`},
		{`{"count":1e3}`, `JSON field "count": got number 1e3 (not an integer), want integer (byte offset 12)`},
		{`{"count":99999999999999999999}`, `JSON field "count": got number 99999999999999999999 (out of range), want integer (byte offset 29)`},
		{`{"meta":{"colour":1},"colour":2}`, `JSON field "colour" is unknown`},
		{`{"meta":{"shade":1},"colour":2}`, `JSON field "colour" is unknown (byte offset 28)`},
	} {
		c := dial(t, addr)
		c.Send(post("/", []byte(tc.body), false, js))
		if resp, got := c.Response("POST"); resp.StatusCode != 400 || got != tc.want {
			t.Errorf("%s: %d %q, want %q", tc.body, resp.StatusCode, got, tc.want)
		}
	}
}

// TestReadJSONHTTP2Type: over HTTP/2 a body may have no length; one sent without a
// Content-Type is refused for its type (415), not taken for an empty body.
func TestReadJSONHTTP2Type(t *testing.T) {
	_, addr := coretest.Serve(t, func(c *core.Ctx) {
		var v map[string]any
		answerBodyError(c, body.ReadJSON(c, &v, body.JSONOptions{}))
	}, core.Options{})
	var protocols http.Protocols
	protocols.SetUnencryptedHTTP2(true)
	client := &http.Client{Transport: &http.Transport{Protocols: &protocols}}
	defer client.CloseIdleConnections()
	for _, tc := range []struct {
		body   io.Reader
		status int
		want   string
	}{
		{io.MultiReader(strings.NewReader(`{"a":1}`)), 415, `Content-Type "" is not JSON`}, // no length
		{nil, 400, "request body is empty"},
	} {
		req, _ := http.NewRequest("POST", "http://"+addr+"/", tc.body)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.ProtoMajor != 2 || resp.StatusCode != tc.status || !strings.Contains(string(got), tc.want) {
			t.Errorf("%s %d %q, want %d %q", resp.Proto, resp.StatusCode, got, tc.status, tc.want)
		}
	}
}

// TestReadJSONServerBound: a body over the server's bound (MaxBodyBytes), under ReadJSON's own,
// is refused without naming a limit the client did not break.
func TestReadJSONServerBound(t *testing.T) {
	_, addr := coretest.Serve(t, func(c *core.Ctx) {
		var v map[string]string
		answerBodyError(c, body.ReadJSON(c, &v, body.JSONOptions{}))
	}, core.Options{MaxBodyBytes: 100})
	for _, chunked := range []bool{false, true} {
		c := dial(t, addr)
		c.Send(post("/", []byte(`{"a":"`+strings.Repeat("x", 200)+`"}`), chunked, "Content-Type: application/json\r\n"))
		if resp, got := c.Response("POST"); resp.StatusCode != 413 || got != "request body too large" {
			t.Errorf("chunked %v: %d %q, want 413 %q", chunked, resp.StatusCode, got, "request body too large")
		}
	}
}

// TestReadJSONNotAPointer: a v that cannot be decoded into is the handler's mistake, reported
// as json's own error rather than blamed on the client.
func TestReadJSONNotAPointer(t *testing.T) {
	_, addr := coretest.Serve(t, func(c *core.Ctx) {
		var in todoIn
		answerBodyError(c, body.ReadJSON(c, in, body.JSONOptions{}))
	}, core.Options{})
	c := dial(t, addr)
	c.Send(post("/", []byte(`{}`), false, "Content-Type: application/json\r\n"))
	if resp, got := c.Response("POST"); resp.StatusCode != 599 || !strings.Contains(got, "non-pointer") {
		t.Fatalf("got %d %q", resp.StatusCode, got)
	}
}

// TestWriteJSON: the status, the type, the newline; and a value that cannot be encoded writes
// nothing, leaving the handler to answer.
func TestWriteJSON(t *testing.T) {
	_, addr := coretest.Serve(t, func(c *core.Ctx) {
		if c.Path() == "/bad" {
			if err := body.WriteJSON(c, 201, map[string]any{"ch": make(chan int)}); err != nil {
				c.SetStatus(500)
				c.WriteString("cannot encode")
			}
			return
		}
		body.WriteJSON(c, 201, map[string]any{"id": 1, "html": "<b>"})
	}, core.Options{})
	c := dial(t, addr)
	c.Send("GET / HTTP/1.1\r\nHost: h\r\n\r\nGET /bad HTTP/1.1\r\nHost: h\r\n\r\n")
	resp, got := c.Response("GET")
	if resp.StatusCode != 201 || resp.Header.Get("Content-Type") != "application/json" || got != `{"html":"\u003cb\u003e","id":1}`+"\n" {
		t.Fatalf("got %d %q %q", resp.StatusCode, resp.Header, got)
	}
	var v map[string]any
	if err := json.Unmarshal([]byte(got), &v); err != nil {
		t.Fatal(err)
	}
	resp, got = c.Response("GET")
	if resp.StatusCode != 500 || resp.Header.Get("Content-Type") == "application/json" || got != "cannot encode" {
		t.Fatalf("unencodable: got %d %q %q", resp.StatusCode, resp.Header, got)
	}
}
