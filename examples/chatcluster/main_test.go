package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/core/coretest"
	"github.com/dwellhttp/dwell/examples/internal/chatapi"
	"github.com/dwellhttp/dwell/wait/jetstream/jetstreamtest"
	"github.com/nats-io/nats.go"
)

// The tests run a real NATS server with JetStream in the test process, on a temporary store,
// and two or three chat instances, each with its own NATS connection, as separate processes
// would have.

// serve runs a chat instance on a free loopback port, with two loops and a NATS connection of
// its own, until the test ends, and returns its base URL.
func serve(t *testing.T, ns *jetstreamtest.Server) string {
	t.Helper()
	_, base := serveChat(t, ns)
	return base
}

// serveChat runs a chat instance as serve does, and returns it too.
func serveChat(t *testing.T, ns *jetstreamtest.Server) (*chat, string) {
	t.Helper()
	nc, err := nats.Connect(ns.URL(), nats.ReconnectBufSize(-1), nats.MaxReconnects(-1),
		nats.ReconnectWait(50*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	ch, err := openChat(nc, "chat")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ch.close)
	_, addr := coretest.Serve(t, ch.handler(), core.Options{Loops: 2})
	return ch, "http://" + addr
}

type pollResult struct {
	Messages []chatapi.Message `json:"messages"`
	Last     uint64            `json:"last"`
	Epoch    string            `json:"epoch"`
}

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
	status, body := post(t, base, `{"text": `+strconv.Quote(text)+`}`)
	var r struct {
		ID  string `json:"id"`
		Seq uint64 `json:"seq"`
	}
	if status != 201 || json.Unmarshal([]byte(body), &r) != nil || len(r.ID) != 36 || r.Seq == 0 {
		t.Fatalf("POST %q: %d %s", text, status, body)
	}
	return r.Seq
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

// follow polls base from cursor until it reaches last and returns the texts seen, checking
// that sequence numbers grow and end at each answer's last.
func follow(t *testing.T, base string, cursor, last uint64) []string {
	t.Helper()
	var texts []string
	for cursor < last {
		r := poll(t, base, fmt.Sprintf("after=%d&timeout=5000", cursor))
		for _, m := range r.Messages {
			if m.Seq <= cursor || m.Seq > r.Last || len(m.ID) != 36 {
				t.Fatalf("after %d: message %+v in an answer ending at %d", cursor, m, r.Last)
			}
			cursor = m.Seq
			texts = append(texts, m.Text)
		}
		if r.Last < cursor || len(r.Messages) == 0 {
			t.Fatalf("an answer with last %d after cursor %d", r.Last, cursor)
		}
		cursor = r.Last
	}
	return texts
}

// TestPostOnAWakesPollsOnB: 100 polls parked on instance B all get the message posted to
// instance A.
func TestPostOnAWakesPollsOnB(t *testing.T) {
	ns := jetstreamtest.New(t)
	a, b := serve(t, ns), serve(t, ns)
	after := postText(t, a, "before")
	const n = 100
	results := make(chan error, n)
	for range n {
		c, err := net.Dial("tcp", strings.TrimPrefix(b, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(coretest.Patience))
		fmt.Fprintf(c, "GET /messages?after=%d&timeout=30000 HTTP/1.1\r\nHost: x\r\n\r\n", after)
		go func() {
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
	postText(t, a, "wake up")
	for range n {
		if err := <-results; err != nil {
			t.Fatal(err)
		}
	}
}

// TestHistoryAcrossInstances: messages posted on A and B come back in one order to a poll on B
// with an old cursor, and an instance started afterwards serves the whole history.
func TestHistoryAcrossInstances(t *testing.T) {
	ns := jetstreamtest.New(t)
	a, b := serve(t, ns), serve(t, ns)
	var want []string
	var last uint64
	for i := range 12 {
		base := a
		if i%3 == 1 {
			base = b
		}
		want = append(want, "m"+strconv.Itoa(i))
		last = postText(t, base, want[i])
	}
	if got := follow(t, b, 0, last); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("on B: %v, want %v", got, want)
	}
	c := serve(t, ns)
	if got := follow(t, c, 0, last); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("on a new instance: %v, want %v", got, want)
	}
	if r := poll(t, c, "after=0&timeout=0"); len(r.Messages) != len(want) || r.Last != last {
		t.Fatalf("timeout=0 on a new instance: %+v", r)
	}
}

// TestNATSDown: a post while NATS is down gets 503; once NATS is back on its store the history
// is intact without the refused message, and posts on A reach polls on B again.
func TestNATSDown(t *testing.T) {
	ns := jetstreamtest.New(t)
	a, b := serve(t, ns), serve(t, ns)
	last := postText(t, a, "before")
	ns.Stop()
	if status, body := post(t, a, `{"text": "refused"}`); status != 503 {
		t.Fatalf("POST with NATS down: %d %s", status, body)
	}
	ns.Start()
	// The instances reconnect by themselves; until then a post may still be refused.
	deadline := time.Now().Add(coretest.Patience)
	for {
		status, body := post(t, a, `{"text": "after"}`)
		if status == 201 {
			break
		}
		if status != 503 || time.Now().After(deadline) {
			t.Fatalf("POST after the restart: %d %s", status, body)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if got := follow(t, b, 0, last+1); strings.Join(got, " ") != "before after" {
		t.Fatalf("history on B: %v", got)
	}
	done := make(chan pollResult, 1)
	go func() { done <- poll(t, b, fmt.Sprintf("after=%d&timeout=20000", last+1)) }()
	seq := postText(t, a, "again")
	if r := <-done; len(r.Messages) != 1 || r.Messages[0].Text != "again" || r.Last != seq {
		t.Fatalf("%+v", r)
	}
}

func TestBadInput(t *testing.T) {
	ns := jetstreamtest.New(t)
	base := serve(t, ns)
	for _, tc := range []struct {
		name, body string
		want       int
	}{
		{"bad JSON", `{"text": `, 400},
		{"no text", `{}`, 400},
		{"empty text", `{"text": ""}`, 400},
		{"text not a string", `{"text": 5}`, 400},
		{"blank text", `{"text": " \t\n"}`, 400},
		{"text over 2048 characters", `{"text": "` + strings.Repeat("a", 2049) + `"}`, 413},
		{"text over 4096 bytes", `{"text": "` + strings.Repeat("€", 1400) + `"}`, 413},
		{"name over 32 characters", `{"text": "hi", "name": "` + strings.Repeat("n", 33) + `"}`, 413},
		{"name with a control character", `{"text": "hi", "name": "a\u0007b"}`, 400},
		{"body over 64 KiB", `{"text": "a", "pad": "` + strings.Repeat(" ", 70<<10) + `"}`, 413},
	} {
		if status, body := post(t, base, tc.body); status != tc.want {
			t.Errorf("POST %s: %d %s, want %d", tc.name, status, body, tc.want)
		}
	}
	for _, q := range []string{"after=abc", "after=-1", "timeout=abc", "after=0&timeout=1e3"} {
		resp, err := client.Get(base + "/messages?" + q)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 400 {
			t.Errorf("GET /messages?%s: %d, want 400", q, resp.StatusCode)
		}
	}
}

func TestPageLoads(t *testing.T) {
	ns := jetstreamtest.New(t)
	base := serve(t, ns)
	resp, err := client.Get(base + "/")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") ||
		!strings.Contains(string(b), "/messages?after=") {
		t.Fatalf("%d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
}

// sseStream opens GET /events and returns a reader of its body, past the opening retry line and
// the comment that names the epoch of the polls.
func sseStream(t *testing.T, base string, header ...string) *bufio.Reader {
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
	return br
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
	var m chatapi.Message
	if !ok || id != fmt.Sprintf("id: %d", seq) || !strings.HasPrefix(data, "data: ") ||
		json.Unmarshal([]byte(strings.TrimPrefix(data, "data: ")), &m) != nil || m.Seq != seq || m.Text != text {
		t.Fatalf("event %q, want seq %d text %q", ev, seq, text)
	}
}

// TestEventsAcrossInstances: an event stream on B carries messages posted to A, and a client
// reconnecting to A with its Last-Event-ID resumes after it.
func TestEventsAcrossInstances(t *testing.T) {
	ns := jetstreamtest.New(t)
	a, b := serve(t, ns), serve(t, ns)
	first := postText(t, a, "old")
	br := sseStream(t, b, fmt.Sprintf("Last-Event-ID: %d", first))
	s1 := postText(t, a, "new 1")
	s2 := postText(t, b, "new 2")
	checkEvent(t, readEvent(t, br), s1, "new 1")
	checkEvent(t, readEvent(t, br), s2, "new 2")

	br2 := sseStream(t, a, fmt.Sprintf("Last-Event-ID: %d", first))
	checkEvent(t, readEvent(t, br2), s1, "new 1")
	checkEvent(t, readEvent(t, br2), s2, "new 2")
}

// TestMain runs the command itself when asked to by TestCommand.
func TestMain(m *testing.M) {
	if url := os.Getenv("CHATCLUSTER_RUN_MAIN"); url != "" {
		os.Args = []string{"chatcluster", "-addr", "127.0.0.1:0", "-loops", "2", "-nats", url, "-stream", "room"}
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestCommand: the command creates its stream, prints its address once ready, serves, and
// stops on SIGTERM.
func TestCommand(t *testing.T) {
	ns := jetstreamtest.New(t)
	cmd := coretest.StartCommand(t, "CHATCLUSTER_RUN_MAIN", ns.URL())
	base := "http://" + cmd.Addr
	postText(t, base, "hello")
	if r := poll(t, base, "after=0"); len(r.Messages) != 1 || r.Messages[0].Text != "hello" {
		t.Fatalf("%+v", r)
	}
	cmd.Terminate()
	if err := cmd.Wait(coretest.Patience); err != nil {
		t.Fatalf("after SIGTERM: %v", err)
	}
}

// TestNameAndTime: a message's name (trimmed) and the time it was posted come back to polls, as
// examples/chat's do, so that the shared page shows them; a message without a name has none.
func TestNameAndTime(t *testing.T) {
	ns := jetstreamtest.New(t)
	base := serve(t, ns)
	before := time.Now().UTC().Truncate(time.Millisecond)
	status, body := post(t, base, `{"text": "hello", "name": "  Ada  "}`)
	var r struct{ Time string }
	if status != 201 || json.Unmarshal([]byte(body), &r) != nil {
		t.Fatalf("POST: %d %s", status, body)
	}
	postText(t, base, "anonymous")
	got := poll(t, base, "after=0&timeout=0")
	if len(got.Messages) != 2 {
		t.Fatalf("%d messages", len(got.Messages))
	}
	m := got.Messages[0]
	at, err := time.Parse(time.RFC3339, m.Time)
	if m.Name != "Ada" || m.Text != "hello" || err != nil || m.Time != r.Time || at.Before(before) {
		t.Fatalf("first message %+v (time %v, %v), posted at %s", m, at, err, r.Time)
	}
	if m := got.Messages[1]; m.Name != "" || m.Time == "" {
		t.Fatalf("second message %+v", m)
	}
}
