//go:build !race && linux && !dwell_portable

package websocket

import (
	"io"
	"strconv"
	"testing"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/core/coretest"
	"github.com/dwellhttp/dwell/wait"
)

// TestFollowAllocs counts what a message costs the followers of a topic, as the allocator
// sees it: per follower, the topic's wait (Topic.OnNext's node for it, and the continuation it
// detaches the request with) and the batch (the slice the message is copied into, which is
// the follower's); the encoding goes into a pooled buffer and the frame into the output's
// pool. With more than one follower a batch of one message is framed once for all of them (a
// PreparedMessage and its frame), whatever the number of followers.
func TestFollowAllocs(t *testing.T) {
	for _, tc := range []struct {
		followers int
		want      float64
	}{
		{1, 3},
		{8, 2 + 8*3},
	} {
		t.Run(strconv.Itoa(tc.followers), func(t *testing.T) {
			tp := wait.NewTopic[string](16)
			f := &Feed[string]{Topic: tp, Encode: func(b []byte, msgs []string, _ uint64, _ error) []byte {
				for _, m := range msgs {
					b = append(b, m...)
				}
				return b
			}}
			_, addr := followServer(t, f, nil, nil, core.Options{Loops: 1})
			clients := make([]*client, tc.followers)
			for i := range clients {
				clients[i] = dialAfter(t, addr, 0)
			}
			coretest.WaitFor(t, "every follower following", func() bool { return f.following.Load() == int64(tc.followers) })
			msg := "0123456789" // a frame of 12 bytes
			in := make([]byte, 2+len(msg))
			do := func() {
				tp.Publish(msg)
				for _, c := range clients {
					if _, err := io.ReadFull(c.R, in); err != nil {
						t.Fatal(err)
					}
				}
			}
			for range 3 {
				do() // the pools fill
			}
			if n := testing.AllocsPerRun(200, do); n != tc.want {
				t.Fatalf("%v allocations per message to %d followers, want %v", n, tc.followers, tc.want)
			}
		})
	}
}
