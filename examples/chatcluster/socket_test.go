package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/dwellhttp/dwell/core/coretest"
	"github.com/dwellhttp/dwell/examples/internal/chatclient"
	"github.com/dwellhttp/dwell/wait/jetstream/jetstreamtest"
)

// The WebSocket transport (GET /ws?after=N) across instances, tested with chatclient, a client
// written from RFC 6455 for the chat examples' tests.

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

// receive reads answers until n messages have come after the cursor, and returns their texts and
// the new cursor.
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

// TestSocketAcrossInstances: a socket on B gets the messages posted to A, in order, as they are
// published, and one on a new instance started afterwards gets the whole history; a client that
// leaves B and reconnects to A with its cursor gets what was posted meanwhile, none twice.
func TestSocketAcrossInstances(t *testing.T) {
	ns := jetstreamtest.New(t)
	a, b := serve(t, ns), serve(t, ns)
	first := postText(t, a, "before")
	epoch := poll(t, a, "after=0&timeout=0").Epoch
	onB := dialSocket(t, b, first)
	catchUp(t, onB, first, epoch)
	var want []string
	for i := range 6 {
		base := []string{a, b}[i%2]
		want = append(want, fmt.Sprintf("m%d", i+1))
		postText(t, base, want[i])
	}
	got, cursor := receive(t, onB, first, epoch, len(want))
	if !equal(got, want) {
		t.Fatalf("on B: %q, want %q", got, want)
	}
	onB.Drop()
	postText(t, b, "while away")
	// A may not have the message from the stream yet: it comes in the socket's first answers, or
	// after them.
	onA := dialSocket(t, a, cursor)
	if got, _ := receive(t, onA, cursor, epoch, 1); !equal(got, []string{"while away"}) {
		t.Fatalf("reconnected to A: %q", got)
	}
	c := serve(t, ns)
	onC := dialSocket(t, c, 0)
	if got, _ := catchUp(t, onC, 0, epoch); !equal(got, append(append([]string{"before"}, want...), "while away")) {
		t.Fatalf("on a new instance: %q", got)
	}
}

// TestSocketPostsAcrossInstances: posts sent on a socket to A without waiting for their answers
// are stored in their order and answered in it, and reach a socket on B and a poll parked there;
// a bad one is refused as a POST would be, in its place.
func TestSocketPostsAcrossInstances(t *testing.T) {
	ns := jetstreamtest.New(t)
	a, b := serve(t, ns), serve(t, ns)
	epoch := poll(t, a, "after=0&timeout=0").Epoch
	onA, onB := dialSocket(t, a, 0), dialSocket(t, b, 0)
	catchUp(t, onA, 0, epoch)
	catchUp(t, onB, 0, epoch)
	parked := make(chan pollResult, 1)
	go func() {
		var r pollResult
		resp, err := client.Get(b + "/messages?after=0&timeout=60000")
		if err == nil {
			r, err = decodePoll(resp)
		}
		if err != nil {
			r.Epoch = "error: " + err.Error()
		}
		parked <- r
	}()
	posts := []string{`{"text": "p1"}`, `{"text": " "}`, `{"text": "p2", "name": "Ada"}`, `{"text": "p3"}`}
	for _, p := range posts {
		if err := onA.WriteText(p); err != nil {
			t.Fatal(err)
		}
	}
	// On A, the answers to the posts in their order, among the answers that carry the messages.
	var seqs []uint64
	var texts []string
	for len(seqs) < 4 || len(texts) < 3 {
		f, err := onA.ReadFrame()
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case f.Posted != nil:
			if f.Posted.Epoch != epoch || len(f.Posted.ID) != 36 {
				t.Fatalf("posted %+v", *f.Posted)
			}
			seqs = append(seqs, f.Posted.Seq)
		case f.Status != 0:
			if len(seqs) != 1 || f.Status != 400 || f.Error != "the text is empty" {
				t.Fatalf("refusal %+v after %d answers", f, len(seqs))
			}
			seqs = append(seqs, 0)
		default:
			for _, m := range f.Messages {
				texts = append(texts, m.Text)
			}
		}
	}
	if fmt.Sprint(seqs) != "[1 0 2 3]" || !equal(texts, []string{"p1", "p2", "p3"}) {
		t.Fatalf("answers %v, messages %q", seqs, texts)
	}
	if got, _ := receive(t, onB, 0, epoch, 3); !equal(got, texts) {
		t.Fatalf("on B: %q", got)
	}
	if r := coretest.Receive(t, "the poll parked on B", parked); len(r.Messages) == 0 || r.Messages[0].Text != "p1" {
		t.Fatalf("the poll on B: %+v", r)
	}
}

// TestSocketStreamRecreated: the stream deleted and created again ends the sockets that
// followed the old one at once: each is told the new epoch, with no messages and last 0, as a
// poll is, and closed with 1000; a socket opened again from 0 follows the new history, and the
// old Topic is closed once they let it go.
func TestSocketStreamRecreated(t *testing.T) {
	ns := jetstreamtest.New(t)
	chA, a := serveChat(t, ns)
	js := operator(t, ns)
	last := postText(t, a, "old")
	old := poll(t, a, "after=0&timeout=0").Epoch
	s := dialSocket(t, a, 0)
	catchUp(t, s, 0, old)
	oldGen := chA.gen.Load()
	coretest.WaitFor(t, "the socket parked", func() bool { return oldGen.parkedPolls() == 1 })

	cfg := streamInfo(t, js).Config
	ctx, cancel := context.WithTimeout(context.Background(), coretest.Patience)
	defer cancel()
	if err := js.DeleteStream(ctx, "chat"); err != nil {
		t.Fatal(err)
	}
	jetstreamtest.CreateStream(t, js, cfg)
	epoch := streamInfo(t, js).Created.UTC().Format(time.RFC3339Nano)
	f, err := s.ReadFrame()
	if err != nil || f.Epoch != epoch || f.Last == nil || *f.Last != 0 || f.Messages == nil || len(f.Messages) != 0 {
		t.Fatalf("the socket got %+v (%v), want no messages, last 0 and epoch %q", f, err, epoch)
	}
	var ce *chatclient.CloseError
	if _, err := s.ReadText(); !errors.As(err, &ce) || ce.Code != 1000 {
		t.Fatalf("then %v, want a close with 1000", err)
	}
	again := dialSocket(t, a, last)
	// A cursor of the old history is ahead of the new one: the answer's last comes back below
	// it, and the client reads the new history from 0.
	if f, err := again.ReadFrame(); err != nil || f.Epoch != epoch || f.Last == nil || *f.Last >= last {
		t.Fatalf("a socket from the old cursor: %+v (%v)", f, err)
	}
	fresh := dialSocket(t, a, 0)
	catchUp(t, fresh, 0, epoch)
	postText(t, a, "new")
	if got, _ := receive(t, fresh, 0, epoch, 1); got[0] != "new" {
		t.Fatalf("in the new history: %q", got)
	}
	coretest.WaitFor(t, "A's old Topic closed", func() bool {
		oldGen.mu.Lock()
		defer oldGen.mu.Unlock()
		return oldGen.closed
	})
}

// TestSocketShutdown: a shutdown closes the sockets with 1001 at once, and lets their generation
// go: the chat closes.
func TestSocketShutdown(t *testing.T) {
	ns := jetstreamtest.New(t)
	cmd := coretest.StartCommand(t, "CHATCLUSTER_RUN_MAIN", ns.URL())
	base := "http://" + cmd.Addr
	postText(t, base, "hello")
	epoch := poll(t, base, "after=0&timeout=0").Epoch
	s := dialSocket(t, base, 0)
	if got, _ := catchUp(t, s, 0, epoch); !equal(got, []string{"hello"}) {
		t.Fatalf("%q", got)
	}
	cmd.Terminate()
	var ce *chatclient.CloseError
	if _, err := s.ReadText(); !errors.As(err, &ce) || ce.Code != 1001 {
		t.Errorf("at the shutdown: %v, want a close with 1001", err)
	}
	if err := cmd.Wait(coretest.Patience); err != nil {
		t.Fatalf("after SIGTERM: %v", err)
	}
}

// decodePoll decodes a poll's answer.
func decodePoll(resp *http.Response) (pollResult, error) {
	defer resp.Body.Close()
	var r pollResult
	err := json.NewDecoder(resp.Body).Decode(&r)
	return r, err
}
