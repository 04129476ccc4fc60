package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/core/coretest"
	"github.com/dwellhttp/dwell/examples/internal/chatapi"
	"github.com/dwellhttp/dwell/examples/internal/chatclient"
	"github.com/dwellhttp/dwell/examples/internal/chatroom"
)

// The WebSocket transport (GET /ws?after=N), tested with chatclient, a client written from RFC
// 6455 for these tests.

// dialSocket opens GET /ws?after=cursor on base; the connection is dropped when the test ends.
func dialSocket(t *testing.T, base string, cursor uint64) *chatclient.Client {
	t.Helper()
	c, err := chatclient.Dial(strings.TrimPrefix(base, "http://"), fmt.Sprintf("/ws?after=%d", cursor), coretest.Patience)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Drop() })
	return c
}

// readFrame reads the socket's next frame.
func readFrame(t *testing.T, c *chatclient.Client) chatclient.Frame {
	t.Helper()
	f, err := c.ReadFrame()
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// answer reads the socket's next frame, which must be a poll's answer of the given epoch that
// follows the cursor (chatclient.Client.Answer), and returns the messages and the new cursor.
func answer(t *testing.T, c *chatclient.Client, cursor uint64, epoch string) ([]chatapi.Message, uint64) {
	t.Helper()
	msgs, last, err := c.Answer(cursor, epoch)
	if err != nil {
		t.Fatal(err)
	}
	return msgs, last
}

// catchUp reads the answers a new socket starts with, up to the one with no messages, and
// returns the texts and the cursor.
func catchUp(t *testing.T, c *chatclient.Client, cursor uint64, epoch string) ([]string, uint64) {
	t.Helper()
	texts, last, err := c.CatchUp(cursor, epoch)
	if err != nil {
		t.Fatal(err)
	}
	return texts, last
}

// receive reads answers until n messages have come after the cursor, and returns their texts
// and the new cursor.
func receive(t *testing.T, c *chatclient.Client, cursor uint64, epoch string, n int) ([]string, uint64) {
	t.Helper()
	texts, last, err := c.Receive(cursor, epoch, n)
	if err != nil {
		t.Fatal(err)
	}
	return texts, last
}

func equal(a, b []string) bool {
	return strings.Join(a, "\x00") == strings.Join(b, "\x00") && len(a) == len(b)
}

// TestSocketDelivery: a socket opened on an empty room says so at once (an answer with no
// messages, the room's epoch and last 0); messages posted then come in order, each with its
// seq, in the same JSON as the polls'.
func TestSocketDelivery(t *testing.T) {
	base := serve(t)
	epoch := poll(t, base, "after=0&timeout=0").Epoch
	c := dialSocket(t, base, 0)
	if texts, last := catchUp(t, c, 0, epoch); len(texts) != 0 || last != 0 {
		t.Fatalf("an empty room: %q, last %d", texts, last)
	}
	want := []string{"one", "two", "three", "four", "five"}
	for _, s := range want {
		postText(t, base, s)
	}
	got, last := receive(t, c, 0, epoch, len(want))
	if !equal(got, want) || last != 5 {
		t.Fatalf("got %q up to %d, want %q", got, last, want)
	}
	r := poll(t, base, "after=0&timeout=0")
	for i, m := range r.Messages {
		if m.Text != want[i] || m.Seq != uint64(i+1) {
			t.Errorf("the poll has %+v at %d", m, i)
		}
	}
}

// TestSocketResume: a client that reconnects with its cursor gets the messages posted while it
// was away, in order, none twice and none lost, then the new ones; a socket opened from an old
// cursor gets everything after it at once.
func TestSocketResume(t *testing.T) {
	base := serve(t)
	epoch := poll(t, base, "after=0&timeout=0").Epoch
	for i := range 10 {
		postText(t, base, fmt.Sprintf("m%d", i+1))
	}
	c := dialSocket(t, base, 4)
	texts, cursor := catchUp(t, c, 4, epoch)
	if !equal(texts, []string{"m5", "m6", "m7", "m8", "m9", "m10"}) || cursor != 10 {
		t.Fatalf("from 4: %q up to %d", texts, cursor)
	}
	c.Drop() // gone without a close frame, as a lost network would
	for i := 10; i < 13; i++ {
		postText(t, base, fmt.Sprintf("m%d", i+1))
	}
	c = dialSocket(t, base, cursor)
	texts, cursor = catchUp(t, c, cursor, epoch)
	if !equal(texts, []string{"m11", "m12", "m13"}) {
		t.Fatalf("after reconnecting: %q", texts)
	}
	postText(t, base, "m14")
	if texts, _ = receive(t, c, cursor, epoch, 1); texts[0] != "m14" {
		t.Fatalf("then %q", texts)
	}
	if err := c.Close(); err != nil {
		t.Errorf("close handshake: %v", err)
	}
}

// TestSocketPost: a client posts on the socket as with POST: the answer gives the message's id,
// seq and time, and the message comes back in the answers like any other; a bad post gets the
// error and status a POST would have, and nothing is published.
func TestSocketPost(t *testing.T) {
	base := serve(t)
	epoch := poll(t, base, "after=0&timeout=0").Epoch
	c := dialSocket(t, base, 0)
	catchUp(t, c, 0, epoch)
	if err := c.WriteText(`{"text": "over the socket", "name": " Ada "}`); err != nil {
		t.Fatal(err)
	}
	// The answer to the post and the message itself may come in either order.
	var posted, echoed *chatclient.Frame
	for posted == nil || echoed == nil {
		f := readFrame(t, c)
		switch {
		case f.Posted != nil:
			posted = &f
		case len(f.Messages) == 1:
			echoed = &f
		default:
			t.Fatalf("frame %+v", f)
		}
	}
	m := echoed.Messages[0]
	if p := posted.Posted; p.Seq != 1 || p.ID != m.ID || p.Time != m.Time || p.Epoch != epoch ||
		m.Text != "over the socket" || m.Name != "Ada" || m.Seq != 1 {
		t.Fatalf("posted %+v, message %+v", *p, m)
	}
	for _, tc := range []struct {
		post   string
		status int
		error  string
	}{
		{`{"text": `, 400, "bad JSON: "},
		{`{}`, 400, `"text" is missing`},
		{`{"text": " "}`, 400, "the text is empty"},
		{`{"text": "` + strings.Repeat("a", 2049) + `"}`, 413, "text of 2049 characters"},
		{`{"text": "a", "name": "a\nb"}`, 400, "the name has control characters"},
	} {
		if err := c.WriteText(tc.post); err != nil {
			t.Fatal(err)
		}
		if f := readFrame(t, c); f.Status != tc.status || !strings.HasPrefix(f.Error, tc.error) {
			t.Errorf("post %.40q: %+v, want %d %q", tc.post, f, tc.status, tc.error)
		}
	}
	if r := poll(t, base, "after=0&timeout=0"); r.Last != 1 || r.Messages[0].Text != "over the socket" {
		t.Errorf("the room: %+v", r)
	}
	// A post over the limit of a body closes the connection with 1009.
	if err := c.WriteText(strings.Repeat(" ", 70<<10)); err != nil {
		t.Fatal(err)
	}
	var ce *chatclient.CloseError
	if _, err := c.ReadText(); !errors.As(err, &ce) || ce.Code != 1009 {
		t.Errorf("after a post of 70 KiB: %v, want a close with 1009", err)
	}
}

// TestSocketOldCursor: a cursor ahead of the room (from an earlier process) is answered with the
// room's last seq, below it, as a poll is: the client learns that its history is gone.
func TestSocketOldCursor(t *testing.T) {
	base := serve(t)
	postText(t, base, "only")
	epoch := poll(t, base, "after=0&timeout=0").Epoch
	c := dialSocket(t, base, 42)
	if texts, last := catchUp(t, c, 1, epoch); len(texts) != 0 || last != 1 {
		t.Fatalf("from 42: %q, last %d", texts, last)
	}
}

// TestSocketsAndPollsWoken: one post reaches 100 sockets and 100 parked polls alike, over two
// loops, with the same message.
func TestSocketsAndPollsWoken(t *testing.T) {
	var polls atomic.Int64
	base := serveHandler(t, parkCounter(chatroom.New().Handler(), &polls))
	after := postText(t, base, "before")
	epoch := poll(t, base, "after=0&timeout=0").Epoch
	const n = 100
	sockets := make([]*chatclient.Client, n)
	for i := range sockets {
		sockets[i] = dialSocket(t, base, after)
		catchUp(t, sockets[i], after, epoch)
	}
	results := make(chan pollResult, n)
	for range n {
		go func() {
			var r pollResult
			resp, err := client.Get(fmt.Sprintf("%s/messages?after=%d&timeout=120000", base, after))
			if err == nil {
				json.NewDecoder(resp.Body).Decode(&r)
				resp.Body.Close()
			}
			results <- r
		}()
	}
	// The counter counts the poll that asked for the epoch too.
	coretest.WaitFor(t, "every poll parked", func() bool { return polls.Load() == n+1 })
	postText(t, base, "wake up")
	for range n {
		if r := coretest.Receive(t, "a poll's answer", results); len(r.Messages) != 1 || r.Messages[0].Text != "wake up" {
			t.Fatalf("a poll got %+v", r)
		}
	}
	for _, c := range sockets {
		if texts, _ := receive(t, c, after, epoch, 1); texts[0] != "wake up" {
			t.Fatalf("a socket got %q", texts)
		}
	}
}

// TestSocketSlowClient: a client that stops reading while 2.4 MB of messages are published
// holds neither the room nor the other clients back: it is cut once its output passes the
// socket's limit (or gets it all, when the kernel's buffers took it), and whatever it got is in
// order; reconnecting with its cursor, it gets the rest.
func TestSocketSlowClient(t *testing.T) {
	base := serve(t)
	epoch := poll(t, base, "after=0&timeout=0").Epoch
	slow := dialSocket(t, base, 0)
	catchUp(t, slow, 0, epoch)
	const n = 600
	text := strings.Repeat("é", 2000) // 4000 bytes
	for range n {
		postText(t, base, text)
	}
	cursor := uint64(0)
	for cursor < n {
		f, err := slow.ReadFrame()
		if err != nil {
			t.Logf("the slow client was cut after %d messages: %v", cursor, err)
			break
		}
		if f.Last == nil {
			t.Fatalf("frame %+v", f)
		}
		for _, m := range f.Messages {
			if m.Seq != cursor+1 || m.Text != text {
				t.Fatalf("message %d after %d", m.Seq, cursor)
			}
			cursor = m.Seq
		}
	}
	again := dialSocket(t, base, cursor)
	texts, last := catchUp(t, again, cursor, epoch)
	if last != n || len(texts) != int(n-cursor) {
		t.Fatalf("reconnecting from %d: %d messages up to %d", cursor, len(texts), last)
	}
}

// TestSocketRefusals: /ws is a WebSocket: a plain GET is refused with 426, a bad cursor with
// 400.
func TestSocketRefusals(t *testing.T) {
	base := serve(t)
	for _, tc := range []struct {
		path string
		want int
	}{{"/ws", 426}, {"/ws?after=abc", 400}} {
		resp, err := client.Get(base + tc.path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("GET %s: %d, want %d", tc.path, resp.StatusCode, tc.want)
		}
	}
	_, err := chatclient.Dial(strings.TrimPrefix(base, "http://"), "/ws?after=-1", coretest.Patience)
	var he *chatclient.HandshakeError
	if !errors.As(err, &he) || he.Status != 400 {
		t.Errorf("an upgrade with after=-1: %v, want 400", err)
	}
}

// TestSocketShutdown: a shutdown closes the sockets with 1001, at once rather than at the end
// of its grace period, and the server stops.
func TestSocketShutdown(t *testing.T) {
	s := core.NewServer(chatroom.New().Handler(), core.Options{
		Addr:   "127.0.0.1:0",
		Loops:  2,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err := s.Listen(); err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- s.ListenAndServe() }()
	base := "http://" + s.Addr().String()
	epoch := poll(t, base, "after=0&timeout=0").Epoch
	var sockets []*chatclient.Client
	for range 4 {
		c := dialSocket(t, base, 0)
		catchUp(t, c, 0, epoch)
		sockets = append(sockets, c)
	}
	// A grace period past the test's patience: a socket left open would fail the test.
	ctx, cancel := context.WithTimeout(context.Background(), 2*coretest.Patience)
	defer cancel()
	shut := make(chan error, 1)
	go func() { shut <- s.Shutdown(ctx) }()
	for _, c := range sockets {
		var ce *chatclient.CloseError
		if _, err := c.ReadText(); !errors.As(err, &ce) || ce.Code != 1001 {
			t.Errorf("at the shutdown: %v, want a close with 1001", err)
		}
	}
	if err := coretest.Receive(t, "the shutdown", shut); err != nil {
		t.Errorf("shutdown: %v", err)
	}
	if err := coretest.Receive(t, "ListenAndServe's return", served); !errors.Is(err, core.ErrServerClosed) {
		t.Errorf("ListenAndServe: %v", err)
	}
	if _, err := http.Get(base + "/"); err == nil {
		t.Error("the server still answers")
	}
}

// TestSocketPing: with nothing new for chatapi.SocketPing, the socket sends an answer with no
// messages and the same cursor. The test waits for it (25 s, beside the others), unless -short.
func TestSocketPing(t *testing.T) {
	if testing.Short() {
		t.Skip("waits 25 s")
	}
	t.Parallel()
	base := serve(t)
	last := postText(t, base, "x")
	epoch := poll(t, base, "after=0&timeout=0").Epoch
	c := dialSocket(t, base, 0)
	catchUp(t, c, 0, epoch)
	start := time.Now()
	if msgs, cursor := answer(t, c, last, epoch); len(msgs) != 0 || cursor != last {
		t.Fatalf("%d messages, cursor %d", len(msgs), cursor)
	}
	if d := time.Since(start); d < 20*time.Second {
		t.Errorf("the empty answer came after %v", d)
	}
}
