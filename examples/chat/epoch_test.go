package main

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/dwellhttp/dwell/core/coretest"
)

// postEpoch posts text and returns the answer's seq and epoch.
func postEpoch(t *testing.T, base, text string) (uint64, string) {
	t.Helper()
	b, _ := json.Marshal(map[string]string{"text": text})
	status, body := post(t, base, string(b))
	var out struct {
		Seq   uint64  `json:"seq"`
		Epoch *string `json:"epoch"`
	}
	if status != 201 || json.Unmarshal([]byte(body), &out) != nil || out.Epoch == nil {
		t.Fatalf("POST: %d %s", status, body)
	}
	return out.Seq, *out.Epoch
}

// TestEpochInAnswers: the answers of a post and of a poll, and the event stream, name the same
// epoch, whatever the messages; another room (another process) has another.
func TestEpochInAnswers(t *testing.T) {
	base := serve(t)
	epoch := poll(t, base, "after=0&timeout=0").Epoch
	if len(epoch) != 36 {
		t.Fatalf("epoch %q, want a UUID", epoch)
	}
	for _, text := range []string{"one", "two"} {
		if _, e := postEpoch(t, base, text); e != epoch {
			t.Errorf("POST %q: epoch %q, want %q", text, e, epoch)
		}
	}
	if r := poll(t, base, "after=1&timeout=0"); r.Epoch != epoch || len(r.Messages) != 1 {
		t.Errorf("poll: %+v, want epoch %q", r, epoch)
	}
	sseStream(t, base) // which checks the stream's epoch against the polls'
	if other := poll(t, serve(t), "after=0&timeout=0").Epoch; other == epoch || other == "" {
		t.Errorf("another room's epoch is %q", other)
	}
}

// TestNewProcessNewEpoch: the command started again numbers its messages from 1 under a new
// epoch; a cursor from the old process is ahead of it, and the answer's last comes back below
// that cursor, which a client tells too.
func TestNewProcessNewEpoch(t *testing.T) {
	first := coretest.StartCommand(t, "CHAT_RUN_MAIN", "1")
	var cursor uint64
	var epoch string
	for _, text := range []string{"a", "b", "c"} {
		cursor, epoch = postEpoch(t, "http://"+first.Addr, text)
	}
	first.Terminate()
	if err := first.Wait(coretest.Patience); err != nil {
		t.Fatalf("after SIGTERM: %v", err)
	}

	second := coretest.StartCommand(t, "CHAT_RUN_MAIN", "1")
	base := "http://" + second.Addr
	seq, e := postEpoch(t, base, "again")
	if seq != 1 || e == epoch {
		t.Fatalf("first post to the new process: seq %d, epoch %q (the old one %q)", seq, e, epoch)
	}
	if r := poll(t, base, fmt.Sprintf("after=%d&timeout=0", cursor)); r.Epoch != e || r.Last >= cursor || len(r.Messages) != 0 {
		t.Errorf("a poll with the old cursor %d: %+v", cursor, r)
	}
	if r := poll(t, base, "after=0&timeout=0"); r.Epoch != e || len(r.Messages) != 1 || r.Messages[0].Text != "again" {
		t.Errorf("the new history: %+v", r)
	}
}
