package wait_test

import (
	"context"
	"fmt"
	"sync"

	"github.com/dwellhttp/dwell/wait"
)

// votes is an application's store: a log of votes that outlives the process (a table, in a real
// one), numbered as the topic numbers them.
type votes struct {
	mu  sync.Mutex // orders a vote's write with its publish
	log []string   // vote seq is log[seq-1]
}

// cast stores a vote, then publishes it: a vote is never seen before it is stored.
func (v *votes) cast(topic *wait.Topic[string], vote string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.log = append(v.log, vote) // INSERT INTO votes (seq, vote) VALUES (topic.Last()+1, ?)
	topic.Publish(vote)
}

// after is the Store's Read: SELECT vote FROM votes WHERE seq > after AND seq <= upto ORDER
// BY seq LIMIT limit.
func (v *votes) after(_ context.Context, after, upto uint64, limit int) ([]string, uint64, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	upto = min(upto, uint64(len(v.log)), after+uint64(limit))
	return append([]string(nil), v.log[after:upto]...), upto, nil
}

func (v *votes) last() uint64 {
	v.mu.Lock()
	defer v.mu.Unlock()
	return uint64(len(v.log))
}

// A topic that continues a durable history: after a restart it numbers on from the store's
// last vote, and a client that comes back with a cursor from before gets exactly what it
// missed, read from the store, then what the new process published, from memory.
func ExampleNewStoredTopic() {
	db := &votes{}
	before := wait.NewStoredTopic(1000, wait.Store[string]{Last: db.last(), Read: db.after})
	for _, v := range []string{"yes", "no", "yes"} {
		db.cast(before, v)
	}
	// The process restarts: a new topic over the same store.
	topic := wait.NewStoredTopic(1000, wait.Store[string]{Last: db.last(), Read: db.after})
	db.cast(topic, "abstain")

	// A client that had seen vote 1. (Since reads the store on the caller's goroutine; a
	// handler's Next and OnNext read it on the worker pool.)
	msgs, last, _ := topic.Since(1)
	fmt.Println(msgs, last)
	msgs, last, _ = topic.Since(last)
	fmt.Println(msgs, last)
	// Output:
	// [no yes] 3
	// [abstain] 4
}
