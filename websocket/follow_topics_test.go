package websocket

import (
	"strconv"
	"testing"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/core/coretest"
	"github.com/dwellhttp/dwell/wait"
)

// TestFollowTopic: one Feed serves the connections of two topics, each chosen by its request
// (FollowTopic): with two connections on each, so that a publish is encoded once for all of a
// topic's, the messages published under the same numbers on both topics never cross — each
// connection gets its own topic's, in order. A Feed without a Topic refuses Follow.
func TestFollowTopic(t *testing.T) {
	topics := map[string]*wait.Topic[string]{"a": wait.NewTopic[string](4), "b": wait.NewTopic[string](4)}
	f := &Feed[string]{Encode: encodeBatch}
	errs := make(chan error, 1)
	_, addr := coretest.Serve(t, func(cx *core.Ctx) {
		after, _ := strconv.ParseUint(cx.Query("after"), 10, 64)
		name := cx.Query("topic")
		c, err := Serve(cx, nil, &Events{})
		if err != nil {
			return
		}
		if name == "" {
			errs <- f.Follow(cx, c, after)
			c.Close(CloseNormal, "")
			return
		}
		if err := f.FollowTopic(cx, c, topics[name], after); err != nil {
			t.Errorf("FollowTopic: %v", err)
		}
	}, core.Options{Loops: 2})
	dialTopic := func(name string) *client {
		c := &client{Conn: coretest.Dial(t, addr), key: [4]byte{1, 2, 3, 4}}
		c.Send(upgradeRequest("/?after=0&topic=" + name))
		if resp, _ := c.Response("GET"); resp.StatusCode != 101 {
			t.Fatalf("upgrade answered %d", resp.StatusCode)
		}
		return c
	}
	clients := map[string][]*client{}
	for _, name := range []string{"a", "b", "a", "b"} {
		clients[name] = append(clients[name], dialTopic(name))
	}
	coretest.WaitFor(t, "four followers", func() bool { return f.following.Load() == 4 })
	// Each message is taken by its topic's connections before the next is published, so that
	// every batch is one message, prepared once for the two, under a number the other topic's
	// message has too.
	for i := 1; i <= 3; i++ {
		for _, name := range []string{"a", "b"} {
			topics[name].Publish(name + strconv.Itoa(i))
			want := strconv.Itoa(i) + "|nil|" + name + strconv.Itoa(i)
			for _, c := range clients[name] {
				if got := c.batch(); got != want {
					t.Fatalf("a follower of %s got %q, want %q", name, got, want)
				}
			}
		}
	}
	dialTopic("")
	if err := <-errs; err != errNoTopic {
		t.Fatalf("Follow without a Topic: %v", err)
	}
}
