package main

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
)

// TestSocket: GET /todos/ws sends what came after its cursor, then a message of none (caught
// up), then each change as it is made, each message the JSON a poll answers; without a cursor
// it follows from now; a bad cursor or a page of another origin is refused before the upgrade.
func TestSocket(t *testing.T) {
	addr, _, _ := testAppTCP(t, config{})
	url := "http://" + addr
	for _, title := range []string{"a", "b"} {
		if resp, body := post(t, url+"/todos", `{"title":"`+title+`"}`); resp.StatusCode != 201 {
			t.Fatalf("POST: %d %q", resp.StatusCode, body)
		}
	}

	ws := dialWS(t, addr, "/todos/ws?after=1")
	if a := ws.read(); changesOf(a.Changes) != "2 create" || a.Next != 2 || a.Missed || a.Changes[0].Todo != (todo{2, "b", false}) {
		t.Fatalf("catch-up: %+v", a)
	}
	if a := ws.read(); len(a.Changes) != 0 || a.Next != 2 {
		t.Fatalf("caught up: %+v", a)
	}
	now := dialWS(t, addr, "/todos/ws")
	if a := now.read(); len(a.Changes) != 0 || a.Next != 2 {
		t.Fatalf("from now: %+v", a)
	}
	post(t, url+"/todos", `{"title":"c"}`)
	for _, c := range []*wsClient{ws, now} {
		if a := c.read(); changesOf(a.Changes) != "3 create" || a.Next != 3 || a.Changes[0].Todo.Title != "c" {
			t.Fatalf("live: %+v", a)
		}
	}
	// The same bytes as a poll's answer, the poll's newline aside.
	_, polled := do(t, "GET", url+"/todos/changes?after=2&timeout=0", "")
	want := strings.TrimSuffix(polled, "\n")
	ws2 := dialWS(t, addr, "/todos/ws?after=2")
	if got, _ := json.Marshal(ws2.read()); string(got) != want {
		t.Fatalf("socket %s, poll %s", got, want)
	}
	ws.close()

	for _, tc := range []struct {
		target string
		fields []string
		status int
	}{
		{"/todos/ws?after=x", nil, 400},
		{"/todos/ws", []string{"Origin: https://evil.example"}, 403},
	} {
		req, _ := http.NewRequest("GET", url+tc.target, nil)
		for _, f := range append(tc.fields, "Upgrade: websocket", "Connection: Upgrade", "Sec-WebSocket-Version: 13", "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==") {
			k, v, _ := strings.Cut(f, ": ")
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.status {
			t.Errorf("%s %v: %d, want %d", tc.target, tc.fields, resp.StatusCode, tc.status)
		}
	}
}

// TestSocketOrigin: a page of -origin may follow the changes too, as it may read the API.
func TestSocketOrigin(t *testing.T) {
	addr, _, _ := testAppTCP(t, config{origin: "https://app.example"})
	ws := dialWS(t, addr, "/todos/ws", "Origin: https://app.example")
	if m := ws.read(); len(m.Changes) != 0 || m.Next != 0 {
		t.Fatalf("%+v", m)
	}
}

// TestSocketMissed: a socket whose cursor is older than the log the database keeps is told it
// missed changes, with those kept.
func TestSocketMissed(t *testing.T) {
	dir := t.TempDir()
	first, _ := newTestApp(t, config{dir: dir})
	first.todos.kept = 2
	for i := range 4 {
		if _, err := first.todos.create(t.Context(), "t"+strconv.Itoa(i), false); err != nil {
			t.Fatal(err)
		}
	}
	// Another app on the same database, as a process started again: cursor 0 is the
	// database's to answer, and it keeps changes 3 and 4.
	addr, _, _ := testAppTCP(t, config{dir: dir})
	ws := dialWS(t, addr, "/todos/ws?after=0")
	if m := ws.read(); !m.Missed || changesOf(m.Changes) != "3 create, 4 create" || m.Next != 4 {
		t.Fatalf("%+v", m)
	}
}

// post sends body to url as JSON through the test's client.
func post(t testing.TB, url, body string) (*http.Response, string) {
	t.Helper()
	return do(t, "POST", url, body, jsonType)
}
