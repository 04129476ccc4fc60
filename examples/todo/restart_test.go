package main

import (
	"strings"
	"syscall"
	"testing"
)

// TestCommandRestart: the todos are in the database in -dir: a process started again with the
// same -dir serves what the first one stored, and numbers new todos after them.
func TestCommandRestart(t *testing.T) {
	dir := t.TempDir()
	first := startProcess(t, dir)
	base := "http://" + strings.TrimPrefix(first.line, "listening http://")
	for _, title := range []string{"one", "two"} {
		if resp, body := do(t, "POST", base+"/todos", `{"title":"`+title+`"}`, jsonType); resp.StatusCode != 201 {
			t.Fatalf("POST: %d %q", resp.StatusCode, body)
		}
	}
	do(t, "PUT", base+"/todos/2", `{"title":"two","done":true}`, jsonType)
	client.CloseIdleConnections()
	first.cmd.Process.Signal(syscall.SIGTERM)
	<-first.exited
	if first.err != nil {
		t.Fatalf("the first process: %v\n%s", first.err, first.stderr)
	}

	second := startProcess(t, dir)
	base = "http://" + strings.TrimPrefix(second.line, "listening http://")
	want := `[{"id":1,"title":"one","done":false},{"id":2,"title":"two","done":true}]` + "\n"
	if resp, body := do(t, "GET", base+"/todos", ""); resp.StatusCode != 200 || body != want {
		t.Fatalf("after the restart: %d %q, want %q", resp.StatusCode, body, want)
	}
	if resp, body := do(t, "POST", base+"/todos", `{"title":"three"}`, jsonType); resp.StatusCode != 201 || !strings.Contains(body, `"id":3`) {
		t.Fatalf("a new todo after the restart: %d %q", resp.StatusCode, body)
	}
}
