package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/core/coretest"
	"github.com/dwellhttp/dwell/examples/internal/chatroom"
)

// serve runs the chat on a free loopback port, with two loops, until the test ends.
func serve(t *testing.T) string {
	t.Helper()
	return serveHandler(t, chatroom.New().Handler())
}

// serveHandler runs h as serve runs the chat.
func serveHandler(t *testing.T, h core.Handler) string {
	t.Helper()
	s := core.NewServer(h, core.Options{
		Addr:   "127.0.0.1:0",
		Loops:  2,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err := s.Listen(); err != nil {
		t.Fatal(err)
	}
	go s.ListenAndServe()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		s.Shutdown(ctx)
	})
	return "http://" + s.Addr().String()
}

// A message as the API shows it.
type message struct {
	ID   string `json:"id"`
	Seq  uint64 `json:"seq"`
	Name string `json:"name"`
	Text string `json:"text"`
	Time string `json:"time"`
}

type pollResult struct {
	Messages []message `json:"messages"`
	Last     uint64    `json:"last"`
	Epoch    string    `json:"epoch"`
}

// client gives up on a request only on a hang.
var client = &http.Client{Timeout: coretest.Patience}

func post(t *testing.T, base, body string) (int, string) {
	t.Helper()
	resp, err := client.Post(base+"/messages", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func postText(t *testing.T, base, text string) uint64 {
	t.Helper()
	b, _ := json.Marshal(map[string]string{"text": text})
	status, body := post(t, base, string(b))
	var out struct {
		ID  string `json:"id"`
		Seq uint64 `json:"seq"`
	}
	if status != 201 || json.Unmarshal([]byte(body), &out) != nil || len(out.ID) != 36 {
		t.Fatalf("POST: %d %s", status, body)
	}
	return out.Seq
}

func poll(t *testing.T, base, query string) pollResult {
	t.Helper()
	resp, err := client.Get(base + "/messages?" + query)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var r pollResult
	if resp.StatusCode != 200 || json.NewDecoder(resp.Body).Decode(&r) != nil {
		t.Fatalf("GET /messages?%s: %d", query, resp.StatusCode)
	}
	if r.Messages == nil {
		t.Fatalf("GET /messages?%s: messages is not an array", query)
	}
	return r
}

// TestThreeHundredPollsWoken: 300 parked polls are all answered with the message of one post.
// Their own timeout is two minutes, past the test's patience: a poll the post did not wake
// fails the test.
func TestThreeHundredPollsWoken(t *testing.T) {
	var polls atomic.Int64
	base := serveHandler(t, parkCounter(chatroom.New().Handler(), &polls))
	addr := strings.TrimPrefix(base, "http://")
	after := postText(t, base, "before")
	const n = 300
	results := make(chan error, n)
	for range n {
		go func() {
			c, err := net.Dial("tcp", addr)
			if err != nil {
				results <- err
				return
			}
			defer c.Close()
			c.SetDeadline(time.Now().Add(coretest.Patience))
			fmt.Fprintf(c, "GET /messages?after=%d&timeout=120000 HTTP/1.1\r\nHost: x\r\n\r\n", after)
			resp, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil {
				results <- err
				return
			}
			var r pollResult
			err = json.NewDecoder(resp.Body).Decode(&r)
			if err == nil && (len(r.Messages) != 1 || r.Messages[0].Text != "wake up" || r.Last != after+1) {
				err = fmt.Errorf("got %+v", r)
			}
			results <- err
		}()
	}
	coretest.WaitFor(t, "every poll parked", func() bool { return polls.Load() == n })
	start := time.Now()
	postText(t, base, "wake up")
	for range n {
		if err := coretest.Receive(t, "a poll's answer", results); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("%d polls answered %v after the post began", n, time.Since(start))
}

// parkCounter wraps a handler so that polls counts the polls (GET /messages) that have parked.
// A function the handler posts to its loop runs only once the handler has given the loop back,
// and a poll with nothing to answer does nothing before it parks.
func parkCounter(h core.Handler, polls *atomic.Int64) core.Handler {
	return func(c *core.Ctx) {
		if c.Method() == "GET" && c.Path() == "/messages" {
			c.Seam().Loop().Post(func() { polls.Add(1) })
		}
		h(c)
	}
}

// TestMessagesWhileAway: three messages posted while nobody polls come back from the next poll
// with the old cursor, in order.
func TestMessagesWhileAway(t *testing.T) {
	base := serve(t)
	cursor := poll(t, base, "after=0&timeout=0").Last
	for _, s := range []string{"one", "two", "three"} {
		postText(t, base, s)
	}
	// A poll that waited would wait for its two minutes, past the client's patience, and
	// fail the test.
	r := poll(t, base, fmt.Sprintf("after=%d&timeout=120000", cursor))
	if len(r.Messages) != 3 || r.Last != cursor+3 {
		t.Fatalf("%+v", r)
	}
	for i, want := range []string{"one", "two", "three"} {
		if m := r.Messages[i]; m.Text != want || m.Seq != cursor+uint64(i)+1 || len(m.ID) != 36 {
			t.Fatalf("message %d: %+v", i, m)
		}
	}
}

// TestNameAndTime: a message carries its sender's name (trimmed; absent when none or a blank one
// was given) and the time the server took it, the same in the POST's answer and in the poll.
func TestNameAndTime(t *testing.T) {
	base := serve(t)
	before := time.Now().Add(-time.Second)
	for _, body := range []string{
		`{"text": "hi", "name": "  Zoë <b>  "}`,
		`{"text": "no name"}`,
		`{"text": "blank name", "name": " \t "}`,
	} {
		status, answer := post(t, base, body)
		var a struct {
			Seq  uint64
			Time string
		}
		if status != 201 || json.Unmarshal([]byte(answer), &a) != nil || a.Time == "" {
			t.Fatalf("POST %s: %d %s", body, status, answer)
		}
	}
	r := poll(t, base, "after=0&timeout=0")
	for i, want := range []struct{ name, text string }{{"Zoë <b>", "hi"}, {"", "no name"}, {"", "blank name"}} {
		m := r.Messages[i]
		at, err := time.Parse(time.RFC3339, m.Time)
		if m.Name != want.name || m.Text != want.text || err != nil || at.Before(before) || at.After(time.Now()) ||
			!strings.HasSuffix(m.Time, "Z") || len(m.Time) != len("2006-01-02T15:04:05.000Z") {
			t.Errorf("message %d: %+v, want name %q text %q and a time in UTC to the millisecond", i, m, want.name, want.text)
		}
	}
	// The name is escaped like the text, and absent rather than empty.
	resp, err := client.Get(base + "/messages?after=0&timeout=0")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if !strings.Contains(string(b), `"name":"Zoë \u003cb\u003e"`) || strings.Count(string(b), `"name"`) != 1 {
		t.Errorf("poll answer %s", b)
	}
}

// TestEmptyPollTimesOut: an empty poll with timeout=700 returns after it, with no messages and
// the same cursor.
func TestEmptyPollTimesOut(t *testing.T) {
	base := serve(t)
	last := postText(t, base, "x")
	start := time.Now()
	r := poll(t, base, fmt.Sprintf("after=%d&timeout=700", last))
	// Not before the timeout; and well before the 30 s default, so that it was the 700 ms
	// asked for that ended it. No loaded machine is late by seconds on a timer.
	if d := time.Since(start); d < 600*time.Millisecond || d >= 15*time.Second {
		t.Fatalf("returned after %v", d)
	}
	if len(r.Messages) != 0 || r.Last != last {
		t.Fatalf("%+v", r)
	}
}

func TestBadInput(t *testing.T) {
	base := serve(t)
	for _, tc := range []struct {
		name, body string
		want       int
		error      string // the start of the error message
	}{
		{"bad JSON", `{"text": `, 400, "bad JSON: unexpected end of JSON input"},
		{"not an object", `"hello"`, 400, "bad JSON: "},
		{"no text", `{}`, 400, `"text" is missing`},
		{"empty text", `{"text": ""}`, 400, "the text is empty"},
		{"blank text", `{"text": " \t\n\u00a0\u3000\ufeff\u0085 "}`, 400, "the text is empty"},
		{"text not a string", `{"text": 5}`, 400, "bad JSON: "},
		{"name not a string", `{"text": "a", "name": 5}`, 400, "bad JSON: "},
		{"text over 4096 bytes", `{"text": "` + strings.Repeat("a", 4097) + `"}`, 413,
			"text of 4097 characters, over the limit of 2048"},
		{"text over 2048 characters", `{"text": "` + strings.Repeat("a", 2049) + `"}`, 413,
			"text of 2049 characters, over the limit of 2048"},
		{"text over 4096 bytes in 1025 characters", `{"text": "` + strings.Repeat("😀", 1025) + `"}`, 413,
			"text of 4100 bytes in UTF-8, over the limit of 4096"},
		{"name over 32 characters", `{"text": "a", "name": "` + strings.Repeat("é", 33) + `"}`, 413,
			"name of 33 characters, over the limit of 32"},
		{"name with a newline", `{"text": "a", "name": "a\nb"}`, 400, "the name has control characters"},
		{"body over 64 KiB", `{"text": "a", "pad": "` + strings.Repeat(" ", 70<<10) + `"}`, 413,
			"request body over 64 KiB"},
	} {
		status, body := post(t, base, tc.body)
		var e struct{ Error string }
		if status != tc.want || json.Unmarshal([]byte(body), &e) != nil || !strings.HasPrefix(e.Error, tc.error) {
			t.Errorf("POST %s: %d %s, want %d %q", tc.name, status, body, tc.want, tc.error)
		}
	}
	for _, text := range []string{strings.Repeat("é", 2048), strings.Repeat("😀", 1024), strings.Repeat("a", 2048)} {
		b, _ := json.Marshal(map[string]string{"text": text, "name": strings.Repeat("é", 32)})
		if status, body := post(t, base, string(b)); status != 201 {
			t.Errorf("POST %d characters, %d bytes: %d %s", len([]rune(text)), len(text), status, body)
		}
	}
	// Nothing refused was published.
	if r := poll(t, base, "after=0&timeout=0"); r.Last != 3 {
		t.Errorf("%d messages published, want 3", r.Last)
	}
	for _, q := range []string{"after=abc", "after=-1", "after=", "after=1.5", "timeout=abc", "timeout=-5", "after=0&timeout=1e3"} {
		resp, err := client.Get(base + "/messages?" + q)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 400 {
			t.Errorf("GET /messages?%s: %d, want 400", q, resp.StatusCode)
		}
	}
	for _, tc := range []struct {
		method, path string
		want         int
	}{{"GET", "/nope", 404}, {"PUT", "/messages", 405}} {
		req, _ := http.NewRequest(tc.method, base+tc.path, nil)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("%s %s: %d, want %d", tc.method, tc.path, resp.StatusCode, tc.want)
		}
	}
}

// TestBrokenBody: a body that breaks off is answered as such by the server (400), not as one
// over the limit, and nothing is published.
func TestBrokenBody(t *testing.T) {
	base := serve(t)
	c := coretest.Dial(t, strings.TrimPrefix(base, "http://"))
	c.Send("POST /messages HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{\"tex\r\nzz\r\n")
	if resp, body := c.Response("POST"); resp.StatusCode != 400 || strings.Contains(body, "64 KiB") {
		t.Errorf("%d %s", resp.StatusCode, body)
	}
	if r := poll(t, base, "after=0&timeout=0"); r.Last != 0 {
		t.Errorf("last %d", r.Last)
	}
}

func TestPageLoads(t *testing.T) {
	base := serve(t)
	resp, err := client.Get(base + "/")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("%d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	page := string(b)
	for _, want := range []string{"<html", "/messages?after=", `method: "POST"`, `rel="icon" href="data:image/svg+xml,`} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if strings.Contains(page, "src=\"http") || strings.Contains(page, "href=\"http") {
		t.Error("page loads external assets")
	}
	if !strings.Contains(resp.Header.Get("Content-Security-Policy"), "script-src 'sha256-") {
		t.Errorf("Content-Security-Policy %q", resp.Header.Get("Content-Security-Policy"))
	}
}

// sseStream opens GET /events and returns a reader of its body, past the opening retry line and
// the comment that names the epoch of the polls.
func sseStream(t *testing.T, base string, header ...string) (*bufio.Reader, net.Conn) {
	t.Helper()
	c, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(coretest.Patience))
	fmt.Fprintf(c, "GET /events HTTP/1.1\r\nHost: x\r\n%s\r\n", strings.Join(append(header, ""), "\r\n"))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("%d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	br := bufio.NewReader(resp.Body)
	if ev, want := readEvent(t, br), "retry: 2000\n: epoch "+poll(t, base, "after=0&timeout=0").Epoch; ev != want {
		t.Fatalf("first block %q, want %q", ev, want)
	}
	return br, c
}

// readEvent reads one event: its lines up to the blank one, joined by newlines.
func readEvent(t *testing.T, br *bufio.Reader) string {
	t.Helper()
	var lines []string
	for {
		l, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("reading the stream: %v", err)
		}
		l = strings.TrimSuffix(l, "\n")
		if l == "" {
			return strings.Join(lines, "\n")
		}
		lines = append(lines, l)
	}
}

func checkEvent(t *testing.T, ev string, seq uint64, text string) {
	t.Helper()
	id, data, ok := strings.Cut(ev, "\n")
	var m message
	if !ok || id != fmt.Sprintf("id: %d", seq) || !strings.HasPrefix(data, "data: ") ||
		json.Unmarshal([]byte(strings.TrimPrefix(data, "data: ")), &m) != nil || m.Seq != seq || m.Text != text {
		t.Fatalf("event %q, want seq %d text %q", ev, seq, text)
	}
}

// TestEventsCarryMessages: the stream carries new messages, and a reconnect with Last-Event-ID
// resumes after it.
func TestEventsCarryMessages(t *testing.T) {
	base := serve(t)
	first := postText(t, base, "old")
	br, _ := sseStream(t, base)
	s1 := postText(t, base, "new 1")
	s2 := postText(t, base, "new 2")
	checkEvent(t, readEvent(t, br), s1, "new 1")
	checkEvent(t, readEvent(t, br), s2, "new 2")

	br2, _ := sseStream(t, base, fmt.Sprintf("Last-Event-ID: %d", first))
	checkEvent(t, readEvent(t, br2), s1, "new 1")
	checkEvent(t, readEvent(t, br2), s2, "new 2")
}

// TestEventsPacedByClient: a client that stops reading holds the stream back, not the server's
// memory; when it reads again every message comes, in order.
func TestEventsPacedByClient(t *testing.T) {
	base := serve(t)
	br, c := sseStream(t, base)
	const n = 600
	text := strings.Repeat("é", 2000) // 4000 bytes, within both limits of a text
	var seqs []uint64
	for range n { // 2.4 MB, far over the high-water mark and the socket buffers
		seqs = append(seqs, postText(t, base, text))
	}
	if r := poll(t, base, "after=0&timeout=0"); r.Last != seqs[n-1] {
		t.Fatalf("the server stopped answering: last %d", r.Last)
	}
	c.SetDeadline(time.Now().Add(coretest.Patience))
	for _, s := range seqs {
		checkEvent(t, readEvent(t, br), s, text)
	}
}

// TestMain runs the command itself when asked to by TestCommand, with the flags of
// CHAT_MORE_ARGS (a JSON array) after its own when there are some (see tls_test.go).
func TestMain(m *testing.M) {
	if os.Getenv("CHAT_RUN_MAIN") == "1" {
		os.Args = []string{"chat", "-addr", "127.0.0.1:0", "-loops", "2"}
		if more := os.Getenv("CHAT_MORE_ARGS"); more != "" {
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

// TestCommand: the command prints its address once ready, serves, and stops on SIGTERM.
func TestCommand(t *testing.T) {
	cmd := coretest.StartCommand(t, "CHAT_RUN_MAIN", "1")
	addr := cmd.Addr
	postText(t, "http://"+addr, "hello")
	if r := poll(t, "http://"+addr, "after=0"); len(r.Messages) != 1 {
		t.Fatalf("%+v", r)
	}
	cmd.Terminate()
	if err := cmd.Wait(coretest.Patience); err != nil {
		t.Fatalf("after SIGTERM: %v", err)
	}
}
