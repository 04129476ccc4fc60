package websocket

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/core/coretest"
	"github.com/dwellhttp/dwell/wait"
)

// A sliceStore is an application's store of messages, numbered from 1, that outlives the
// servers of a test.
type sliceStore struct {
	mu   sync.Mutex
	msgs []string
}

func (s *sliceStore) last() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return uint64(len(s.msgs))
}

// publish stores m, then publishes it on tp, under the store's lock.
func (s *sliceStore) publish(tp *wait.Topic[string], m string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.msgs = append(s.msgs, m)
	tp.Publish(m)
}

func (s *sliceStore) read(_ context.Context, after, upto uint64, limit int) ([]string, uint64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	upto = min(upto, uint64(len(s.msgs)), after+uint64(limit))
	return append([]string(nil), s.msgs[after:upto]...), upto, nil
}

// storedFeed serves a Feed of a topic that continues st, with a history of 4.
func storedFeed(t *testing.T, st *sliceStore) (*core.Server, string, *wait.Topic[string]) {
	tp := wait.NewStoredTopic(4, wait.Store[string]{Last: st.last(), Read: st.read})
	f := &Feed[string]{Topic: tp, Encode: encodeBatch, CaughtUp: true}
	s, addr := followServer(t, f, nil, nil, core.Options{Loops: 2})
	return s, addr, tp
}

// follow reads batches until the cursor reaches to, and returns the messages after from.
func follow(t *testing.T, c *client, from, to uint64) []string {
	t.Helper()
	var got []string
	for cursor := from; cursor < to; {
		b := strings.SplitN(c.batch(), "|", 3)
		n, _ := strconv.ParseUint(b[0], 10, 64)
		if b[1] != "nil" || n <= cursor || b[2] == "" {
			t.Fatalf("after %d: %q", cursor, b)
		}
		got = append(got, strings.Split(b[2], ",")...)
		cursor = n
	}
	return got
}

// TestFollowStoredTopicRestart: a server whose topic continues a store is stopped and another
// started over the same store; a client that follows again with its cursor from the first gets
// exactly what it missed — the first server's messages after its cursor and the second's
// older than its memory, from the store, then those of its memory — then the new ones, and
// the sign that it has caught up in between.
func TestFollowStoredTopicRestart(t *testing.T) {
	st := &sliceStore{}
	s1, addr, tp := storedFeed(t, st)
	c := dialAfter(t, addr, 0)
	if got := c.batch(); got != "0|nil|" {
		t.Fatal(got)
	}
	for i := 1; i <= 3; i++ {
		st.publish(tp, fmt.Sprintf("m%d", i))
	}
	if got := follow(t, c, 0, 3); strings.Join(got, " ") != "m1 m2 m3" {
		t.Fatalf("before the restart: %q", got)
	}
	c.Close() // the client goes away with its cursor, 3
	for i := 4; i <= 6; i++ {
		st.publish(tp, fmt.Sprintf("m%d", i))
	}
	ctx, cancel := context.WithTimeout(context.Background(), coretest.Patience)
	defer cancel()
	if err := s1.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}

	_, addr, tp = storedFeed(t, st)
	for i := 7; i <= 12; i++ {
		st.publish(tp, fmt.Sprintf("m%d", i)) // the memory keeps m9..m12
	}
	c = dialAfter(t, addr, 3)
	want := "m4 m5 m6 m7 m8 m9 m10 m11 m12"
	if got := follow(t, c, 3, 12); strings.Join(got, " ") != want {
		t.Fatalf("after the restart, from 3: %q, want %q", got, want)
	}
	if got := c.batch(); got != "12|nil|" {
		t.Fatalf("then %q, want the sign of caught up", got)
	}
	st.publish(tp, "m13")
	if got := c.batch(); got != "13|nil|m13" {
		t.Fatalf("then %q", got)
	}
}
