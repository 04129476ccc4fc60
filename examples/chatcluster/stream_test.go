package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/dwellhttp/dwell/core/coretest"
	"github.com/dwellhttp/dwell/wait/jetstream/jetstreamtest"
	"github.com/nats-io/nats.go"
	natsjs "github.com/nats-io/nats.go/jetstream"
)

// operator returns a JetStream client of the test's own, as an operator's tool would be.
func operator(t *testing.T, ns *jetstreamtest.Server) natsjs.JetStream {
	t.Helper()
	nc, err := nats.Connect(ns.URL(), nats.MaxReconnects(-1), nats.ReconnectWait(50*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := natsjs.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return js
}

// streamInfo returns what JetStream says of the chat's stream.
func streamInfo(t *testing.T, js natsjs.JetStream) *natsjs.StreamInfo {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), coretest.Patience)
	defer cancel()
	st, err := js.Stream(ctx, "chat")
	if err != nil {
		t.Fatal(err)
	}
	return st.CachedInfo()
}

// postEpoch posts text and returns the answer's seq and epoch.
func postEpoch(t *testing.T, base, text string) (uint64, string) {
	t.Helper()
	status, body := post(t, base, `{"text": `+strconv.Quote(text)+`}`)
	var r struct {
		Seq   uint64  `json:"seq"`
		Epoch *string `json:"epoch"`
	}
	if status != 201 || json.Unmarshal([]byte(body), &r) != nil || r.Epoch == nil {
		t.Fatalf("POST %q: %d %s", text, status, body)
	}
	return r.Seq, *r.Epoch
}

// pollLater starts a poll on another goroutine; its answer, or what went wrong, comes on the
// channel.
func pollLater(base, query string) <-chan pollResult {
	done := make(chan pollResult, 1)
	go func() {
		var r pollResult
		resp, err := client.Get(base + "/messages?" + query)
		if err == nil {
			err = json.NewDecoder(resp.Body).Decode(&r)
			resp.Body.Close()
		}
		if err != nil {
			r.Epoch = "error: " + err.Error()
		}
		done <- r
	}()
	return done
}

// parkedPolls is how many polls are parked on the generation.
func (g *generation) parkedPolls() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.parked)
}

// TestEpochIsTheStreams: every instance names the same epoch, the stream's creation time, in
// the answers of posts and polls and in its event streams; NATS restarted on its store keeps it.
func TestEpochIsTheStreams(t *testing.T) {
	ns := jetstreamtest.New(t)
	a, b := serve(t, ns), serve(t, ns)
	want := streamInfo(t, operator(t, ns)).Created.UTC().Format(time.RFC3339Nano)
	for _, base := range []string{a, b} {
		if _, e := postEpoch(t, base, "hi"); e != want {
			t.Errorf("POST to %s: epoch %q, want %q", base, e, want)
		}
		if r := poll(t, base, "after=0&timeout=0"); r.Epoch != want {
			t.Errorf("poll of %s: epoch %q, want %q", base, r.Epoch, want)
		}
		sseStream(t, base) // which checks the stream's epoch against the polls'
	}

	ns.Stop()
	ns.Start()
	for _, base := range []string{a, b} {
		// The instances reconnect by themselves; until then a post is refused.
		var answer string
		coretest.WaitFor(t, "a post stored after the restart", func() bool {
			var status int
			status, answer = post(t, base, `{"text": "same stream"}`)
			return status == 201
		})
		var r struct{ Epoch string }
		if json.Unmarshal([]byte(answer), &r); r.Epoch != want {
			t.Errorf("after NATS restarted, POST to %s: %s, want epoch %q", base, answer, want)
		}
	}
}

// TestStreamRecreated: the stream deleted and created again is a new history. While it is gone
// posts are refused; once it is back, a poll parked on the old one answers at once with the new
// epoch and the cursor 0, every instance follows the new stream (none of the old messages, the
// numbering from 1), messages flow between instances again, and the old Topic is closed.
func TestStreamRecreated(t *testing.T) {
	ns := jetstreamtest.New(t)
	a := serve(t, ns)
	chB, b := serveChat(t, ns)
	js := operator(t, ns)
	postText(t, a, "old 1")
	last := postText(t, b, "old 2")
	old := poll(t, b, "after=0&timeout=0").Epoch
	// Parked for longer than the client's patience: only the new stream can end it in time.
	parked := pollLater(b, fmt.Sprintf("after=%d&timeout=120000", last))
	oldGen := chB.gen.Load()
	coretest.WaitFor(t, "the poll parked on B", func() bool { return oldGen.parkedPolls() == 1 })

	cfg := streamInfo(t, js).Config
	ctx, cancel := context.WithTimeout(context.Background(), coretest.Patience)
	defer cancel()
	if err := js.DeleteStream(ctx, "chat"); err != nil {
		t.Fatal(err)
	}
	if status, body := post(t, a, `{"text": "nowhere"}`); status != 503 {
		t.Errorf("POST with the stream gone: %d %s", status, body)
	}
	jetstreamtest.CreateStream(t, js, cfg)
	epoch := streamInfo(t, js).Created.UTC().Format(time.RFC3339Nano)
	if epoch == old {
		t.Fatalf("the new stream's epoch is the old one's, %q", old)
	}

	if r := coretest.Receive(t, "the parked poll's answer", parked); r.Epoch != epoch || r.Last != 0 || len(r.Messages) != 0 {
		t.Fatalf("the parked poll answered %+v, want no messages, last 0 and epoch %q", r, epoch)
	}
	coretest.WaitFor(t, "A following the new stream", func() bool {
		return poll(t, a, "after=0&timeout=0").Epoch == epoch
	})
	for _, base := range []string{a, b} {
		if r := poll(t, base, "after=0&timeout=0"); len(r.Messages) != 0 || r.Epoch != epoch {
			t.Errorf("%s: %+v, want the new, empty history", base, r)
		}
	}
	seq, e := postEpoch(t, a, "new 1")
	if seq != 1 || e != epoch {
		t.Fatalf("the first post to the new stream: seq %d, epoch %q", seq, e)
	}
	if got := follow(t, b, 0, seq); len(got) != 1 || got[0] != "new 1" {
		t.Fatalf("on B: %q", got)
	}
	waiting := pollLater(b, fmt.Sprintf("after=%d&timeout=120000", seq))
	seq = postText(t, a, "new 2")
	if r := coretest.Receive(t, "the poll on B", waiting); len(r.Messages) != 1 || r.Messages[0].Text != "new 2" ||
		r.Last != seq || r.Epoch != epoch {
		t.Fatalf("a poll on B woken by a post on A: %+v", r)
	}
	sseStream(t, b)
	coretest.WaitFor(t, "B's old Topic closed", func() bool {
		oldGen.mu.Lock()
		defer oldGen.mu.Unlock()
		return oldGen.closed
	})
}

// TestPostFindsNewStream: an instance that has not noticed the stream created again (its
// advisories lost) learns of it from a post whose seq its Topic has passed: the answer names the
// new stream's epoch, not the old one with a seq of the new one, and the instance follows the
// new stream.
func TestPostFindsNewStream(t *testing.T) {
	ns := jetstreamtest.New(t)
	ch, a := serveChat(t, ns)
	if err := ch.sub.Unsubscribe(); err != nil {
		t.Fatal(err)
	}
	js := operator(t, ns)
	postText(t, a, "old 1")
	postText(t, a, "old 2")
	cfg := streamInfo(t, js).Config
	ctx, cancel := context.WithTimeout(context.Background(), coretest.Patience)
	defer cancel()
	if err := js.DeleteStream(ctx, "chat"); err != nil {
		t.Fatal(err)
	}
	jetstreamtest.CreateStream(t, js, cfg)
	epoch := streamInfo(t, js).Created.UTC().Format(time.RFC3339Nano)
	if seq, e := postEpoch(t, a, "new 1"); seq != 1 || e != epoch {
		t.Fatalf("the first post to the new stream: seq %d, epoch %q, want 1 and %q", seq, e, epoch)
	}
	coretest.WaitFor(t, "A following the new stream", func() bool {
		return poll(t, a, "after=0&timeout=0").Epoch == epoch
	})
	if r := poll(t, a, "after=0&timeout=0"); len(r.Messages) != 1 || r.Messages[0].Text != "new 1" {
		t.Fatalf("the new history: %+v", r)
	}
}
