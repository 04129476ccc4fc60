package main

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dwellhttp/dwell/core/coretest"
)

// TestMain runs the command itself when a command test asks for it, with its stderr — the
// access log — in a file of the test's directory, and the flags of TODO_MORE_ARGS (a JSON
// array) after its own when there are some (see tls_test.go).
func TestMain(m *testing.M) {
	if dir := os.Getenv("TODO_RUN_MAIN"); dir != "" {
		stderr, err := os.Create(filepath.Join(dir, "stderr.log"))
		if err != nil {
			panic(err)
		}
		os.Stderr = stderr
		os.Args = []string{"todo", "-addr", "127.0.0.1:0", "-dir", filepath.Join(dir, "files"), "-max-body", "64"}
		if more := os.Getenv("TODO_MORE_ARGS"); more != "" {
			var args []string
			if err := json.Unmarshal([]byte(more), &args); err != nil {
				panic(err)
			}
			os.Args = append(os.Args, args...)
		}
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// accessLog reads the command's access log lines, by path.
func accessLog(t *testing.T, dir string) map[string][]map[string]any {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, "stderr.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	lines := map[string][]map[string]any{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("stderr line %q is not JSON: %v", sc.Text(), err)
		}
		if m["msg"] == "request" {
			lines[m["path"].(string)] = append(lines[m["path"].(string)], m)
		}
	}
	return lines
}

// TestCommandShutdown: on SIGTERM, a parked long poll is answered at once — 200, no changes,
// its cursor — an event stream ends, a socket is closed with 1001, and the process exits
// cleanly; the access log has one JSON line per response with its keys, the 413 of an oversized
// body and the poll's real wait among them.
func TestCommandShutdown(t *testing.T) {
	dir := t.TempDir()
	// One loop, so that the order the requests are sent in is the order their handlers start
	// in: with two, the poll's connection may be another loop's, and its handler start after
	// the event stream's first bytes, which the poll's wait is measured from.
	t.Setenv("TODO_MORE_ARGS", `["-loops", "1"]`)
	cmd := coretest.StartCommand(t, "TODO_RUN_MAIN", dir)

	// A body over -max-body: 413 with the request id, as JSON.
	big := coretest.Dial(t, cmd.Addr)
	big.Send("POST /todos HTTP/1.1\r\nHost: h\r\nContent-Type: application/json\r\nX-Request-Id: big-1\r\nContent-Length: 100\r\n\r\n" + strings.Repeat("x", 100))
	resp, body := big.Response("POST")
	if resp.StatusCode != 413 || resp.Header.Get("X-Request-Id") != "big-1" || !strings.Contains(body, `"error"`) {
		t.Fatalf("oversized body: %d %q %q", resp.StatusCode, resp.Header, body)
	}

	// A long poll, then an event stream: once the stream's first bytes arrive, the loop has
	// taken both requests, and the poll is parked (one loop: see above).
	poll, err := net.Dial("tcp", cmd.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer poll.Close()
	io.WriteString(poll, "GET /todos/changes?after=0&timeout=60000 HTTP/1.1\r\nHost: h\r\nX-Request-Id: poll-1\r\n\r\n")
	events := coretest.Dial(t, cmd.Addr)
	events.Send("GET /todos/events HTTP/1.1\r\nHost: h\r\n\r\n")
	stream, err := readResponse(events)
	if err != nil || stream.StatusCode != 200 {
		t.Fatalf("event stream: %v", err)
	}
	sr := bufio.NewReader(stream.Body)
	if line, err := sr.ReadString('\n'); line != "retry: 2000\n" {
		t.Fatalf("event stream began %q, %v", line, err)
	}
	parked := time.Now()
	// A socket, live.
	ws := dialWS(t, cmd.Addr, "/todos/ws")
	if m := ws.read(); len(m.Changes) != 0 || m.Next != 0 {
		t.Fatalf("socket: %+v", m)
	}

	term := time.Now()
	if err := cmd.Terminate(); err != nil {
		t.Fatal(err)
	}
	poll.SetReadDeadline(time.Now().Add(coretest.Patience))
	pr := coretest.Conn{T: t, TCPConn: poll.(*net.TCPConn), R: bufio.NewReader(poll)}
	resp, body = pr.Response("GET")
	answered := time.Since(term)
	if resp.StatusCode != 200 || body != `{"changes":[],"next":0}`+"\n" {
		t.Fatalf("parked poll at shutdown: %d %q", resp.StatusCode, body)
	}
	// At once, not at the end of the grace period: the poll was told that a shutdown began.
	if answered >= grace {
		t.Fatalf("parked poll answered %v after SIGTERM, not before the grace period (%v) ended", answered, grace)
	}
	if rest, err := io.ReadAll(sr); err != nil || strings.Contains(string(rest), "event:") {
		t.Fatalf("event stream ended with %q, %v", rest, err)
	}
	if code := ws.readClose(); code != 1001 {
		t.Fatalf("the socket closed with %d at shutdown, want 1001", code)
	}
	if err := cmd.Wait(10 * time.Second); err != nil {
		t.Fatalf("after SIGTERM: %v", err)
	}
	t.Logf("poll answered %v after SIGTERM; process gone %v after it", answered, time.Since(term))

	lines := accessLog(t, dir)
	for path, ls := range lines {
		for _, m := range ls {
			for _, k := range []string{"method", "path", "status", "bytes", "duration", "request_id"} {
				if _, ok := m[k]; !ok {
					t.Fatalf("%s: line without %s: %v", path, k, m)
				}
			}
		}
	}
	if ls := lines["/todos"]; len(ls) != 1 || ls[0]["status"] != 413.0 || ls[0]["request_id"] != "big-1" {
		t.Fatalf("lines of /todos: %v", ls)
	}
	ls := lines["/todos/changes"]
	if len(ls) != 1 || ls[0]["status"] != 200.0 || ls[0]["request_id"] != "poll-1" {
		t.Fatalf("lines of /todos/changes: %v", ls)
	}
	// The poll's line tells its whole wait: from before the stream's start to SIGTERM at least.
	if waited := time.Duration(ls[0]["duration"].(float64)); waited < term.Sub(parked) {
		t.Fatalf("the poll's line says %v, but it waited %v at least", waited, term.Sub(parked))
	}
	if ls := lines["/todos/events"]; len(ls) != 1 || ls[0]["status"] != 200.0 {
		t.Fatalf("lines of /todos/events: %v", ls)
	}
}
