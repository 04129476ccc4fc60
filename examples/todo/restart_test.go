package main

import (
	"bufio"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// TestCommandRestart: the todos and their change log are in the database in -dir: a process
// started again with the same -dir serves what the first one stored, numbers new todos after
// them, and numbers its changes on from the first one's. A client that comes back with a cursor
// from the first process — a poll, a socket, an event stream's Last-Event-ID — gets exactly the
// changes it missed, then the new ones.
func TestCommandRestart(t *testing.T) {
	dir := t.TempDir()
	first := startProcess(t, dir)
	base := "http://" + strings.TrimPrefix(first.line, "listening http://")
	for _, title := range []string{"one", "two"} {
		if resp, body := do(t, "POST", base+"/todos", `{"title":"`+title+`"}`, jsonType); resp.StatusCode != 201 {
			t.Fatalf("POST: %d %q", resp.StatusCode, body)
		}
	}
	// The clients saw the first change, and nothing after: they come back with cursor 1.
	if got := pollAll(t, base, 0); changesOf(got.Changes) != "1 create, 2 create" {
		t.Fatalf("before the restart: %+v", got)
	}
	do(t, "PUT", base+"/todos/2", `{"title":"two","done":true}`, jsonType)
	client.CloseIdleConnections()
	first.cmd.Process.Signal(syscall.SIGTERM)
	<-first.exited
	if first.err != nil {
		t.Fatalf("the first process: %v\n%s", first.err, first.stderr)
	}

	second := startProcess(t, dir)
	addr := strings.TrimPrefix(second.line, "listening http://")
	base = "http://" + addr
	want := `[{"id":1,"title":"one","done":false},{"id":2,"title":"two","done":true}]` + "\n"
	if resp, body := do(t, "GET", base+"/todos", ""); resp.StatusCode != 200 || body != want {
		t.Fatalf("after the restart: %d %q, want %q", resp.StatusCode, body, want)
	}

	const missed = "2 create, 3 update"
	if got := pollAll(t, base, 1); changesOf(got.Changes) != missed || got.Next != 3 || got.Missed {
		t.Fatalf("a poll from cursor 1: %+v, want %s", got, missed)
	}
	if got := pollAll(t, base, 0); changesOf(got.Changes) != "1 create, "+missed || got.Changes[2].Todo != (todo{2, "two", true}) {
		t.Fatalf("a poll from cursor 0: %+v", got)
	}
	ws := dialWS(t, addr, "/todos/ws?after=1")
	var caughtUp []change
	for m := ws.read(); len(m.Changes) > 0; m = ws.read() {
		caughtUp = append(caughtUp, m.Changes...)
	}
	if changesOf(caughtUp) != missed {
		t.Fatalf("a socket from cursor 1: %s, want %s", changesOf(caughtUp), missed)
	}
	req, _ := http.NewRequest("GET", base+"/todos/events", nil)
	req.Header.Set("Last-Event-ID", "1")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	events := bufio.NewReader(resp.Body)
	for _, want := range []sseEvent{{"2", "create", `{"id":2,"title":"two","done":false}`}, {"3", "update", `{"id":2,"title":"two","done":true}`}} {
		if e := readEvent(t, events); e != want {
			t.Fatalf("an event stream from Last-Event-ID 1: %+v, want %+v", e, want)
		}
	}

	// A new change is numbered on, and comes to each of them.
	if resp, body := do(t, "POST", base+"/todos", `{"title":"three"}`, jsonType); resp.StatusCode != 201 || !strings.Contains(body, `"id":3`) {
		t.Fatalf("a new todo after the restart: %d %q", resp.StatusCode, body)
	}
	if got := pollAll(t, base, 3); changesOf(got.Changes) != "4 create" || got.Next != 4 {
		t.Fatalf("a poll from cursor 3: %+v", got)
	}
	if m := ws.read(); changesOf(m.Changes) != "4 create" || m.Next != 4 {
		t.Fatalf("the socket: %+v", m)
	}
	if e := readEvent(t, events); e != (sseEvent{"4", "create", `{"id":3,"title":"three","done":false}`}) {
		t.Fatalf("the event stream: %+v", e)
	}
}

// pollAll polls GET /todos/changes from after without waiting, again and again while answers
// bring changes (a cursor older than the process's memory is answered a page at a time, from
// the database), and returns them all, with the last answer's cursor and whether one said
// changes were missed.
func pollAll(t testing.TB, base string, after uint64) changesAnswer {
	t.Helper()
	all := changesAnswer{Changes: []change{}, Next: after}
	for {
		resp, body := do(t, "GET", base+"/todos/changes?timeout=0&after="+strconv.FormatUint(all.Next, 10), "")
		a := pollAnswer(t, resp, body)
		all.Missed = all.Missed || a.Missed
		all.Next = a.Next
		if len(a.Changes) == 0 {
			return all
		}
		all.Changes = append(all.Changes, a.Changes...)
	}
}
