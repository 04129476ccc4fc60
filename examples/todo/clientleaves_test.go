package main

import (
	"context"
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/dwellhttp/dwell/core/coretest"
)

// waitStack waits until some goroutine runs fn (a worker in a store's call).
func waitStack(t *testing.T, fn string) {
	t.Helper()
	coretest.WaitFor(t, "a goroutine in "+fn, func() bool {
		buf := make([]byte, 1<<20)
		return strings.Contains(string(buf[:runtime.Stack(buf, true)]), fn)
	})
}

// withAttachment serves the application with todo 1, which has an attachment, in dir.
func withAttachment(t *testing.T) (*app, logLines, *coretest.Client, string) {
	dir := t.TempDir()
	a, logs := newTestApp(t, config{dir: dir})
	c := coretest.NewClient(t, a.handler(), serverOptions())
	a.serve(c.Server())
	cr := coretest.NewRequest("POST", "/todos", strings.NewReader(`{"title":"a"}`))
	cr.Header.Set("Content-Type", "application/json")
	if r := c.Do(cr); r.StatusCode != 201 {
		t.Fatalf("create: %d", r.StatusCode)
	}
	if r := c.Do(coretest.NewRequest("POST", "/todos/1/attachment", strings.NewReader("first"))); r.StatusCode != 201 {
		t.Fatalf("first upload: %d", r.StatusCode)
	}
	logs.next(t, "/todos/1/attachment")
	return a, logs, c, dir
}

// TestAttachClientLeaves: an upload whose client leaves while its attach is under way — the
// write goes through, as store.write finishes what it began — keeps the file the database now
// names, and deletes the one it replaced.
func TestAttachClientLeaves(t *testing.T) {
	a, logs, c, dir := withAttachment(t)
	seq := a.todos.changes.Last()

	a.todos.mu.Lock() // another write under way
	x := c.Start(coretest.NewRequest("POST", "/todos/1/attachment", strings.NewReader("second")))
	waitStack(t, "todo.(*store).attach(")
	x.Close() // the client gives up
	a.todos.mu.Unlock()
	logs.next(t, "/todos/1/attachment")

	ctx, cancel := context.WithTimeout(context.Background(), coretest.Patience)
	defer cancel()
	if chs, _, err := a.todos.changes.NextContext(ctx, seq); err != nil || len(chs) != 1 || chs[0].Op != "attach" {
		t.Fatalf("changes %v %v", chs, err)
	}
	r := c.Do(coretest.NewRequest("GET", "/todos/1/attachment", nil))
	if b, _ := io.ReadAll(r.Body); r.StatusCode != 200 || string(b) != "second" {
		t.Fatalf("the attachment after the committed attach: %d %q", r.StatusCode, b)
	}
	if got := files(t, dir); len(got) != 1 {
		t.Fatalf("files %q: want the second alone", got)
	}
}

// TestRemoveClientLeaves: a DELETE whose client leaves while it is under way deletes the
// attachment's file with the todo.
func TestRemoveClientLeaves(t *testing.T) {
	a, logs, c, dir := withAttachment(t)
	a.todos.mu.Lock()
	x := c.Start(coretest.NewRequest("DELETE", "/todos/1", nil))
	waitStack(t, "todo.(*store).remove(")
	x.Close()
	a.todos.mu.Unlock()
	logs.next(t, "/todos/1")
	if r := c.Do(coretest.NewRequest("GET", "/todos/1", nil)); r.StatusCode != 404 {
		t.Fatalf("todo 1 still there: %d", r.StatusCode)
	}
	coretest.WaitFor(t, "the attachment's file deleted", func() bool { return len(files(t, dir)) == 0 })
}
