package main

import (
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/dwellhttp/dwell/wait"
)

// storedChanges reads the changes table, in order.
func storedChanges(t *testing.T, s *store) []change {
	t.Helper()
	rows, err := s.db.Query(`SELECT seq, op, todo FROM changes ORDER BY seq`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []change
	for rows.Next() {
		var ch change
		var data []byte
		if err := rows.Scan(&ch.Seq, &ch.Op, &data); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(data, &ch.Todo); err != nil {
			t.Fatal(err)
		}
		out = append(out, ch)
	}
	return out
}

// TestChangeLog: writes made at once, through the API, are stored in the log numbered 1, 2, 3
// ... with no gap (a refused write takes no number), in the order the topic publishes them;
// and the log, replayed, is the list.
func TestChangeLog(t *testing.T) {
	url, a, _ := testApp(t, config{})
	var wg sync.WaitGroup
	for i := range 12 {
		wg.Go(func() {
			title := "t" + strconv.Itoa(i)
			status, body := send("POST", url+"/todos", `{"title":"`+title+`"}`)
			var created todo
			if status != 201 || json.Unmarshal([]byte(body), &created) != nil {
				t.Errorf("POST: %d %q", status, body)
				return
			}
			id := strconv.FormatInt(created.ID, 10)
			for _, w := range []struct {
				method, path, body string
				status             int
			}{
				{"PUT", "/todos/999", `{"title":"none"}`, 404}, // no change
				{"PUT", "/todos/" + id, `{"title":"` + title + `","done":true}`, 200},
				{"DELETE", "/todos/" + id, "", 204},
			} {
				if w.method == "DELETE" && i%3 != 0 {
					break
				}
				if status, body := send(w.method, url+w.path, w.body); status != w.status {
					t.Errorf("%s %s: %d %q, want %d", w.method, w.path, status, body, w.status)
				}
			}
		})
	}
	wg.Wait()

	stored := storedChanges(t, a.todos)
	published, last, err := a.todos.changes.Since(0)
	if err != nil || last != uint64(len(stored)) || len(stored) != 12*2+4 {
		t.Fatalf("%d changes stored, %d published up to %d (%v); want 28", len(stored), len(published), last, err)
	}
	replayed := map[int64]todo{}
	for i, ch := range stored {
		if ch.Seq != uint64(i+1) || ch != published[i] {
			t.Fatalf("change %d stored as %+v, published as %+v", i+1, ch, published[i])
		}
		if ch.Op == "delete" {
			delete(replayed, ch.Todo.ID)
		} else {
			replayed[ch.Todo.ID] = ch.Todo
		}
	}
	var list []todo
	_, body := do(t, "GET", url+"/todos", "")
	json.Unmarshal([]byte(body), &list)
	if len(list) != len(replayed) {
		t.Fatalf("the list has %d todos, the log %d", len(list), len(replayed))
	}
	for _, td := range list {
		if replayed[td.ID] != td {
			t.Errorf("todo %d is %+v, the log says %+v", td.ID, td, replayed[td.ID])
		}
	}
}

// TestChangeLogPruned: the table keeps the last changes only; a topic over it (a process
// started again) numbers on from the last, and tells a cursor older than the table that it
// missed changes, with those kept.
func TestChangeLogPruned(t *testing.T) {
	dir := t.TempDir()
	first, _ := newTestApp(t, config{dir: dir})
	first.todos.kept = 3
	for i := range 5 {
		if _, err := first.todos.create(t.Context(), "t"+strconv.Itoa(i), false); err != nil {
			t.Fatal(err)
		}
	}
	if got := changesOf(storedChanges(t, first.todos)); got != "3 create, 4 create, 5 create" {
		t.Fatalf("stored: %s", got)
	}
	second, _ := newTestApp(t, config{dir: dir})
	topic := second.todos.changes
	if msgs, last, err := topic.Since(1); err != wait.ErrMissed || changesOf(msgs) != "3 create, 4 create, 5 create" || last != 5 {
		t.Fatalf("from 1: %s %d %v", changesOf(msgs), last, err)
	}
	if msgs, last, err := topic.Since(2); err != nil || changesOf(msgs) != "3 create, 4 create, 5 create" || last != 5 {
		t.Fatalf("from 2: %s %d %v", changesOf(msgs), last, err)
	}
	if _, err := second.todos.create(t.Context(), "t5", false); err != nil {
		t.Fatal(err)
	}
	if msgs, last, err := topic.Since(5); err != nil || changesOf(msgs) != "6 create" || last != 6 {
		t.Fatalf("from 5: %s %d %v", changesOf(msgs), last, err)
	}
}

// send makes a request for a goroutine of the test's, which must not call t.Fatal: it returns
// the status and the body, or the error as the body with status 0.
func send(method, url, body string) (int, string) {
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		return 0, err.Error()
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, err.Error()
	}
	return resp.StatusCode, string(b)
}
