package jetstream

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/dwellhttp/dwell/wait/jetstream/jetstreamtest"
)

// TestNextContext: goroutines follow the topic with NextContext — one from 0, older than the
// memory, read from the stream a page at a time, one from now, waiting — while another
// instance publishes, a message of another subject and one Decode refuses among them: each
// sees every message of the topic after its cursor once, in order; a follower whose context
// ends gets none, its cursor and the context's error.
func TestNextContext(t *testing.T) {
	ns := jetstreamtest.New(t)
	ncA, ncB := jetstreamtest.Connect(t, ns.URL()), jetstreamtest.Connect(t, ns.URL())
	createStream(t, ncA)
	a, b := newTopic(t, ncA, 4), newTopic(t, ncB, 4)
	var want []string
	var live uint64
	for i := range 6 {
		want = append(want, fmt.Sprint(i))
		live = publish(t, a, want[i])
	}
	waitFor(t, "B has received everything", func() bool { return b.Last() == live })
	fromZero, fromNow := make(chan string, 1), make(chan string, 1)
	followTo := func(after uint64, n int, out chan<- string) {
		var got []string
		for len(got) < n {
			msgs, last, err := b.NextContext(context.Background(), after)
			if err != nil {
				out <- fmt.Sprintf("after %d: %v", after, err)
				return
			}
			got, after = append(got, msgs...), last
		}
		out <- strings.Join(got, ",")
	}
	go followTo(0, 12, fromZero)
	go followTo(live, 6, fromNow)
	for i := 6; i < 12; i++ {
		want = append(want, fmt.Sprint(i))
		if i == 8 {
			if _, err := jsPublish(ncA, "chat.other", "not the topic's"); err != nil {
				t.Fatal(err)
			}
			publish(t, a, "bad")
		}
		publish(t, a, want[i])
	}
	if got := <-fromZero; got != strings.Join(want, ",") {
		t.Fatalf("from 0: %s", got)
	}
	if got := <-fromNow; got != strings.Join(want[6:], ",") {
		t.Fatalf("from %d: %s", live, got)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	last := b.Last()
	if msgs, cursor, err := b.NextContext(ctx, last); msgs != nil || cursor != last || err != context.Canceled {
		t.Fatalf("NextContext with its context done: %v %d %v", msgs, cursor, err)
	}
}
