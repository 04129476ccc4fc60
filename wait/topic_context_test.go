package wait

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/core/coretest"
)

// TestTopicNextContextFollowers: goroutines follow a stored topic with NextContext, each from
// a cursor of its own, while other goroutines and handlers publish 100,000 messages; every
// follower sees every message after its cursor exactly once, in order, as the store holds them.
// The history is small, so that followers that fall behind are answered from the store. Run it
// with -race.
func TestTopicNextContextFollowers(t *testing.T) {
	const (
		stored     = 1000 // in the store before the topic is made
		publishers = 3
		each       = 30000 // by each publishing goroutine
		requests   = 1000  // to the publishing handler,
		perRequest = 10    // each publishing this many
		total      = stored + publishers*each + requests*perRequest
	)
	s := &memStore{first: 1}
	for i := 1; i <= stored; i++ {
		s.msgs = append(s.msgs, fmt.Sprintf("s%d", i))
	}
	tp := NewStoredTopic(64, Store[string]{Last: s.last(), Read: s.Read})
	_, addr := coretest.Serve(t, func(c *core.Ctx) {
		n := c.Query("n")
		for i := range perRequest {
			s.publish(tp, fmt.Sprintf("h%s-%d", n, i))
		}
		c.WriteString("ok")
	}, core.Options{Loops: 2})

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cursors := []uint64{0, stored / 2, stored}
	seen := make([][]string, len(cursors))
	var followers sync.WaitGroup
	for f, from := range cursors {
		followers.Go(func() {
			after := from
			for after < total {
				msgs, last, err := tp.NextContext(ctx, after)
				if err != nil {
					t.Errorf("follower %d after %d: %v", f, after, err)
					return
				}
				if want := after + uint64(len(msgs)); last != want {
					t.Errorf("follower %d after %d: %d messages up to %d", f, after, len(msgs), last)
					return
				}
				seen[f] = append(seen[f], msgs...)
				after = last
			}
		})
	}

	var pub sync.WaitGroup
	for p := range publishers {
		pub.Go(func() {
			for i := range each {
				s.publish(tp, fmt.Sprintf("g%d-%d", p, i))
			}
		})
	}
	for cl := range 2 {
		pub.Go(func() {
			c := dial(t, addr)
			defer c.Close()
			for r := cl; r < requests; r += 2 {
				c.get(fmt.Sprintf("/?n=%d", r))
				if code, body := c.response(); code != 200 || body != "ok" {
					t.Errorf("publish request %d: %d %q", r, code, body)
					return
				}
			}
		})
	}
	pub.Wait()
	followers.Wait()

	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.msgs) != total {
		t.Fatalf("the store holds %d messages, want %d", len(s.msgs), total)
	}
	for f, from := range cursors {
		want := s.msgs[from:]
		if len(seen[f]) != len(want) {
			t.Fatalf("follower %d from %d saw %d messages, want %d", f, from, len(seen[f]), len(want))
		}
		for i := range want {
			if seen[f][i] != want[i] {
				t.Fatalf("follower %d: message %d is %q, the store's %q", f, from+uint64(i)+1, seen[f][i], want[i])
			}
		}
	}
}

// TestNextContextEnds: a goroutine waiting in NextContext gets the messages published after
// its cursor, and when its context ends, none, its cursor and the context's error; a cursor
// ahead of the topic counts as its last.
func TestNextContextEnds(t *testing.T) {
	tp := NewTopic[string](4)
	tp.Publish("a")
	got := make(chan string, 1)
	go func() {
		msgs, last, err := tp.NextContext(context.Background(), 99)
		got <- fmt.Sprint(msgs, last, err)
	}()
	coretest.WaitFor(t, "the goroutine waiting", func() bool {
		tp.h.mu.Lock()
		defer tp.h.mu.Unlock()
		return tp.h.passed != nil
	})
	tp.Publish("b")
	if g := <-got; g != "[b] 2 <nil>" {
		t.Fatalf("NextContext after a publish: %s", g)
	}

	ctx, cancel := context.WithCancel(context.Background())
	ended := make(chan error, 1)
	go func() {
		msgs, last, err := tp.NextContext(ctx, 2)
		if msgs != nil || last != 2 {
			err = fmt.Errorf("%v %d %w", msgs, last, err)
		}
		ended <- err
	}()
	cancel()
	if err := <-ended; err != context.Canceled {
		t.Fatalf("NextContext with its context cancelled: %v", err)
	}
	if msgs, last, err := tp.NextContext(context.Background(), 1); fmt.Sprint(msgs, last, err) != "[b] 2 <nil>" {
		t.Fatalf("NextContext with a message there: %v %d %v", msgs, last, err)
	}
}

// TestEventWaitContext: a goroutine in Event.WaitContext is woken by the next Fire, not by one
// before its wait began.
func TestEventWaitContext(t *testing.T) {
	var e Event
	e.Fire()
	woken := make(chan error, 1)
	go func() { woken <- e.WaitContext(context.Background()) }()
	coretest.WaitFor(t, "the goroutine waiting", func() bool {
		e.h.mu.Lock()
		defer e.h.mu.Unlock()
		return e.h.passed != nil
	})
	select {
	case err := <-woken:
		t.Fatalf("woken before the Fire: %v", err)
	default:
	}
	e.Fire()
	if err := <-woken; err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := e.WaitContext(ctx); err != context.Canceled {
		t.Fatalf("WaitContext with its context done: %v", err)
	}
}
