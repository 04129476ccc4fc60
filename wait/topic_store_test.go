package wait

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/core/coretest"
)

// A memStore is the application's store of a test: the messages by sequence number, from
// first, as a database keeps them; what Read was asked, and an error for it to fail with.
type memStore struct {
	mu    sync.Mutex
	first uint64   // the sequence number of msgs[0]: those before were pruned
	msgs  []string // stored, in order
	reads []string // "after,upto,limit" for each Read
	err   error
}

func (s *memStore) last() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.first + uint64(len(s.msgs)) - 1
}

// publish stores m and publishes it, as an application does: stored first, under one lock.
func (s *memStore) publish(tp *Topic[string], m string) uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if seq := tp.Last() + 1; seq != s.first+uint64(len(s.msgs)) {
		panic(fmt.Sprintf("the topic would number %d, the store %d", seq, s.first+uint64(len(s.msgs))))
	}
	s.msgs = append(s.msgs, m)
	return tp.Publish(m)
}

func (s *memStore) Read(ctx context.Context, after, upto uint64, limit int) ([]string, uint64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reads = append(s.reads, fmt.Sprintf("%d,%d,%d", after, upto, limit))
	if s.err != nil {
		return nil, after, s.err
	}
	var err error
	if after+1 < s.first {
		after, err = s.first-1, ErrMissed
	}
	var out []string
	for seq := after + 1; seq <= upto && len(out) < limit && seq < s.first+uint64(len(s.msgs)); seq++ {
		out = append(out, s.msgs[seq-s.first])
	}
	return out, after + uint64(len(out)), err
}

func (s *memStore) readsSince(n int) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Join(s.reads[n:], " ")
}

// storedTopic makes a store holding m1 ... m<stored> and a topic continuing it with history 4,
// which then publishes m<stored+1> ... m<stored+published>.
func storedTopic(stored, published int) (*memStore, *Topic[string]) {
	s := &memStore{first: 1}
	for i := 1; i <= stored; i++ {
		s.msgs = append(s.msgs, fmt.Sprintf("m%d", i))
	}
	tp := NewStoredTopic(4, Store[string]{Last: s.last(), Read: s.Read})
	for i := stored + 1; i <= stored+published; i++ {
		s.publish(tp, fmt.Sprintf("m%d", i))
	}
	return s, tp
}

// TestStoredTopicNumbers: a stored topic numbers its messages after the store's last, and
// waits from there: a cursor at the store's last gets the next message published. Without a
// Read, the cursors before the memory get what it keeps, with ErrMissed.
func TestStoredTopicNumbers(t *testing.T) {
	s, tp := storedTopic(10, 0)
	if tp.Last() != 10 {
		t.Fatalf("Last %d, want the store's 10", tp.Last())
	}
	_, addr := coretest.Serve(t, pollHandler(tp), core.Options{Loops: 1})
	c := dial(t, addr)
	c.get("/?after=10&ms=60000")
	coretest.WaitFor(t, "parked", func() bool { return tp.h.waiting() == 1 })
	if seq := s.publish(tp, "m11"); seq != 11 {
		t.Fatalf("the first message published is %d, want 11", seq)
	}
	if _, got := c.response(); got != "11:m11;nil" {
		t.Fatal(got)
	}
	// With no Read, only the numbers go on: what came before is missed.
	bare := NewStoredTopic(4, Store[string]{Last: 10})
	if msgs, last, err := bare.Since(3); len(msgs) != 0 || last != 10 || err != ErrMissed {
		t.Fatalf("a topic without Read, from 3: %q, %d, %v", msgs, last, err)
	}
	bare.Publish("m11")
	if msgs, last, err := bare.Since(3); strings.Join(msgs, ",") != "m11" || last != 11 || err != ErrMissed {
		t.Fatalf("then: %q, %d, %v", msgs, last, err)
	}
}

// TestStoredTopicReads: the cursors before the memory are answered from the store, a page of
// at most history messages at a time, up to where the memory begins; from there, the memory's
// messages; Next and OnNext alike, from the handler. The store is asked for nothing the memory
// holds.
func TestStoredTopicReads(t *testing.T) {
	for _, path := range []string{"/", "/k"} {
		t.Run(path, func(t *testing.T) {
			s, tp := storedTopic(10, 6) // the store has m1..m16; the memory m13..m16
			_, addr := coretest.Serve(t, pollHandler(tp), core.Options{Loops: 1})
			for _, tc := range []struct{ after, want, reads string }{
				{"0", "4:m1,m2,m3,m4;nil", "0,12,4"},
				{"4", "8:m5,m6,m7,m8;nil", "4,12,4"},
				{"9", "12:m10,m11,m12;nil", "9,12,4"},
				{"12", "16:m13,m14,m15,m16;nil", ""},
				{"14", "16:m15,m16;nil", ""},
				{"99", "16:;" + ErrTimeout.Error(), ""},
			} {
				s.mu.Lock()
				n := len(s.reads)
				s.mu.Unlock()
				if got := roundTrip(t, addr, path+"?after="+tc.after+"&ms=20"); got != tc.want {
					t.Errorf("after %s: %q, want %q", tc.after, got, tc.want)
				}
				if got := s.readsSince(n); got != tc.reads {
					t.Errorf("after %s: the store was asked %q, want %q", tc.after, got, tc.reads)
				}
			}
			if msgs, last, err := tp.Since(2); strings.Join(msgs, ",") != "m3,m4,m5,m6" || last != 6 || err != nil {
				t.Errorf("Since(2): %q, %d, %v", msgs, last, err)
			}
		})
	}
}

// TestStoredTopicPruned: a store that no longer has the messages after a cursor says so with
// those it has (ErrMissed); one that has none of them leaves the memory's, with ErrMissed.
func TestStoredTopicPruned(t *testing.T) {
	s, tp := storedTopic(10, 6)
	s.mu.Lock()
	s.first, s.msgs = 6, s.msgs[5:] // m1..m5 pruned
	s.mu.Unlock()
	_, addr := coretest.Serve(t, pollHandler(tp), core.Options{Loops: 1})
	if got := roundTrip(t, addr, "/?after=2&ms=20"); got != "9:m6,m7,m8,m9;"+ErrMissed.Error() {
		t.Errorf("after 2: %q", got)
	}
	s.mu.Lock()
	s.first, s.msgs = 17, nil // all pruned
	s.mu.Unlock()
	if got := roundTrip(t, addr, "/k?after=2&ms=20"); got != "16:m13,m14,m15,m16;"+ErrMissed.Error() {
		t.Errorf("after 2, with the store empty: %q", got)
	}
}

// TestStoredTopicReadError: a Read that fails is the wait's error, with no messages and the
// cursor, for Next and OnNext; Since too.
func TestStoredTopicReadError(t *testing.T) {
	s, tp := storedTopic(10, 6)
	failed := errors.New("the database is away")
	s.err = failed
	_, addr := coretest.Serve(t, pollHandler(tp), core.Options{Loops: 1})
	for _, path := range []string{"/", "/k"} {
		if got := roundTrip(t, addr, path+"?after=3&ms=20"); got != "3:;the database is away" {
			t.Errorf("%s: %q", path, got)
		}
	}
	if _, last, err := tp.Since(3); err != failed || last != 3 {
		t.Errorf("Since: %d, %v", last, err)
	}
}

// TestStoredTopicFromContinuation: OnNext called again from its continuation with a cursor the
// memory no longer covers reads the store without a coroutine: the request is detached while
// a worker reads, and the page comes to the continuation on the request's loop.
func TestStoredTopicFromContinuation(t *testing.T) {
	s, tp := storedTopic(10, 6)
	_, addr := coretest.Serve(t, func(c *core.Ctx) {
		tp.OnNext(c, tp.Last(), time.Minute, func(c *core.Ctx, msgs []string, last uint64, err error) {
			tp.OnNext(c, 1, time.Minute, replyStrings) // from the continuation, older than memory
		})
	}, core.Options{Loops: 1})
	c := dial(t, addr)
	c.get("/")
	coretest.WaitFor(t, "parked", func() bool { return tp.h.waiting() == 1 })
	s.publish(tp, "m17")
	if _, got := c.response(); got != "5:m2,m3,m4,m5;nil" {
		t.Fatal(got)
	}
}

// TestStoredTopicBurst: a poll parked in OnNext and woken after more than the memory holds
// was published gets the messages after its cursor from the store (its continuation reads it
// through a worker), not ErrMissed. The burst comes while the loop is held up by a handler
// that blocks it on purpose, so that the wake-up finds all of it.
func TestStoredTopicBurst(t *testing.T) {
	s, tp := storedTopic(0, 0)
	blocking, release := make(chan struct{}), make(chan struct{})
	poll := pollHandler(tp)
	_, addr := coretest.Serve(t, func(c *core.Ctx) {
		if c.Path() == "/block" {
			close(blocking)
			<-release // the loop's one goroutine: nothing else runs on it meanwhile
			return
		}
		poll(c)
	}, core.Options{Loops: 1})
	c := dial(t, addr)
	c.get("/k?after=0&ms=60000")
	coretest.WaitFor(t, "parked", func() bool { return tp.h.waiting() == 1 })
	b := dial(t, addr)
	b.get("/block")
	coretest.Receive(t, "the loop blocked", blocking)
	for i := 1; i <= 10; i++ {
		s.publish(tp, fmt.Sprintf("m%d", i))
	}
	close(release)
	if _, got := c.response(); got != "4:m1,m2,m3,m4;nil" {
		t.Fatalf("the poll woken after 10 messages, 4 in memory: %q", got)
	}
	if got := s.readsSince(0); got != "0,6,4" {
		t.Fatalf("the store was asked %q", got)
	}
}
