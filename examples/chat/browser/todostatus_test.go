package browser

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dwellhttp/dwell/core/coretest"
)

// shownCell is the figure of the connections table's total row under the heading given; -1
// while it shows none.
func shownCell(u *user, heading string) int {
	u.t.Helper()
	text := eval[string](u, `(() => {
		const heads = [...document.querySelectorAll("#conns thead th")].map((th) => th.textContent);
		const i = heads.indexOf(`+strconv.Quote(heading)+`);
		const row = document.querySelector("#conns tfoot tr");
		return i < 0 || !row ? "" : row.cells[i].textContent;
	})()`)
	n, err := strconv.Atoi(text)
	if err != nil {
		return -1
	}
	return n
}

// TestTodoStatusPage: examples/todo's /debug/dwell, in Chromium, follows the server as a long
// poll waits and ends, and counts a refused request.
func TestTodoStatusPage(t *testing.T) {
	p := startProgram(t, build(t, "../../todo"))
	u := openStatusPage(t, p.url()+"debug/dwell")
	u.waitFor("the stream live", `document.getElementById("status").textContent === "live"`)
	u.waitFor("no request waiting", `document.querySelector("#conns tfoot tr") !== null`)
	if n := shownCell(u, "Parked"); n != 0 {
		t.Fatalf("%d parked before the poll", n)
	}

	// A long poll: parked, as a continuation (Topic.OnNext).
	poll := coretest.Dial(t, p.addr)
	poll.Send("GET /todos/changes?after=0&timeout=60000 HTTP/1.1\r\nHost: h\r\n\r\n")
	began := time.Now()
	coretest.WaitFor(t, "the page to show the poll", func() bool { return shownCell(u, "Parked") == 1 && shownCell(u, "Continuations") == 1 })
	t.Logf("the poll shown %v after it was sent", time.Since(began))

	// A request the server refuses itself: 400, among the refusals.
	bad := coretest.Dial(t, p.addr)
	bad.Send("GET / HTTP/1.1\r\n\r\n") // no Host
	if resp, _ := bad.Response("GET"); resp.StatusCode != 400 {
		t.Fatalf("a request without Host: %d", resp.StatusCode)
	}
	began = time.Now()
	u.waitFor("the refusal shown", `document.getElementById("refused").textContent === "1"`)
	t.Logf("the refusal shown %v after its answer", time.Since(began))

	// The poll answered (a todo added): no longer waiting.
	resp, err := http.Post("http://"+p.addr+"/todos", "application/json", strings.NewReader(`{"title":"seen"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 201 {
		t.Fatalf("POST /todos: %d", resp.StatusCode)
	}
	if r, body := poll.Response("GET"); r.StatusCode != 200 || len(body) == 0 {
		t.Fatalf("the poll answered %d %q", r.StatusCode, body)
	}
	coretest.WaitFor(t, "the page to show the poll answered", func() bool { return shownCell(u, "Parked") == 0 })
}
