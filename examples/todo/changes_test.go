package main

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// pollAnswer decodes GET /todos/changes.
func pollAnswer(t testing.TB, resp *http.Response, body string) changesAnswer {
	t.Helper()
	var a changesAnswer
	if resp.StatusCode != 200 || json.Unmarshal([]byte(body), &a) != nil || a.Changes == nil {
		t.Fatalf("poll: %d %q", resp.StatusCode, body)
	}
	return a
}

// TestChanges: the long poll answers at once with what came after its cursor, waits for the
// next change when there is none, and answers empty when its time is up; the access log says
// 200 and the real wait.
func TestChanges(t *testing.T) {
	url, _, logs := testApp(t, config{})
	do(t, "POST", url+"/todos", `{"title":"a"}`, jsonType)
	do(t, "PUT", url+"/todos/1", `{"title":"b","done":true}`, jsonType)

	poll := func(query string) changesAnswer {
		resp, body := do(t, "GET", url+"/todos/changes?"+query, "")
		return pollAnswer(t, resp, body)
	}
	got := poll("after=0")
	want := `[{"seq":1,"op":"create","todo":{"id":1,"title":"a","done":false}},{"seq":2,"op":"update","todo":{"id":1,"title":"b","done":true}}]`
	if b, _ := json.Marshal(got.Changes); string(b) != want || got.Next != 2 || got.Missed {
		t.Fatalf("changes %s next %d", b, got.Next)
	}
	got = poll("after=1&timeout=0")
	if len(got.Changes) != 1 || got.Changes[0].Seq != 2 || got.Next != 2 {
		t.Fatalf("after 1: %+v", got)
	}

	// A parked poll, answered by the next change; whether it parked before the DELETE or not,
	// its answer is that change.
	answered := make(chan string)
	go func() {
		resp, err := client.Get(url + "/todos/changes?after=2&timeout=60000")
		if err != nil {
			answered <- err.Error()
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		answered <- string(b)
	}()
	do(t, "DELETE", url+"/todos/1", "")
	if err := json.Unmarshal([]byte(<-answered), &got); err != nil || len(got.Changes) != 1 || got.Changes[0].Op != "delete" || got.Changes[0].Todo.ID != 1 || got.Next != 3 {
		t.Fatalf("woken poll: %+v", got)
	}

	// Nothing comes: the poll ends empty after its timeout, with its cursor.
	start := time.Now()
	got = poll("after=3&timeout=300")
	if len(got.Changes) != 0 || got.Next != 3 || time.Since(start) < 300*time.Millisecond {
		t.Fatalf("timed-out poll: %+v after %v", got, time.Since(start))
	}
	for {
		m := logs.next(t, "/todos/changes")
		if d := time.Duration(m["duration"].(float64)); d >= 300*time.Millisecond {
			if m["status"] != 200.0 {
				t.Fatalf("logged %v", m)
			}
			break
		}
	}

	for _, q := range []string{"after=x", "after=-1", "timeout=soon"} {
		resp, body := do(t, "GET", url+"/todos/changes?"+q, "")
		if resp.StatusCode != 400 {
			t.Fatalf("%s: %d %q", q, resp.StatusCode, body)
		}
		errorOf(t, resp, body)
	}
}

// sseEvent is one Server-Sent Event.
type sseEvent struct{ id, event, data string }

// readEvent reads the next event, skipping comments and the retry field.
func readEvent(t testing.TB, r *bufio.Reader) sseEvent {
	t.Helper()
	var e sseEvent
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("event stream: %v", err)
		}
		line = strings.TrimSuffix(line, "\n")
		switch {
		case line == "":
			if e != (sseEvent{}) {
				return e
			}
		case strings.HasPrefix(line, "id: "):
			e.id = line[4:]
		case strings.HasPrefix(line, "event: "):
			e.event = line[7:]
		case strings.HasPrefix(line, "data: "):
			e.data = line[6:]
		}
	}
}

// TestEvents: the event stream replays the changes after Last-Event-ID, then follows new ones.
func TestEvents(t *testing.T) {
	url, _, _ := testApp(t, config{})
	do(t, "POST", url+"/todos", `{"title":"a"}`, jsonType)
	do(t, "POST", url+"/todos", `{"title":"b"}`, jsonType)

	req, _ := http.NewRequest("GET", url+"/todos/events", nil)
	req.Header.Set("Last-Event-ID", "1")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" || resp.Header.Get("X-Request-Id") == "" {
		t.Fatalf("%d %q", resp.StatusCode, resp.Header)
	}
	r := bufio.NewReader(resp.Body)
	if e := readEvent(t, r); e != (sseEvent{"2", "create", `{"id":2,"title":"b","done":false}`}) {
		t.Fatalf("replayed %+v", e)
	}
	do(t, "PUT", url+"/todos/1", `{"title":"a","done":true}`, jsonType)
	if e := readEvent(t, r); e != (sseEvent{"3", "update", `{"id":1,"title":"a","done":true}`}) {
		t.Fatalf("live %+v", e)
	}

	// A bad cursor is refused before the stream starts.
	resp2, body := do(t, "GET", url+"/todos/events", "", "Last-Event-ID: nope")
	if resp2.StatusCode != 400 {
		t.Fatalf("bad Last-Event-ID: %d %q", resp2.StatusCode, body)
	}
}
