//go:build !race && linux && !dwell_portable

package websocket

import (
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/wait"
)

// TestFollowFootprint measures what a connection following a topic costs the server while it
// waits for the next message, beside an idle keep-alive connection (heap in use and goroutine
// stacks, after a collection), in three ways of writing it: a Feed (the event style, its
// request detached on the topic), the same by hand (examples/chat's socket before the Feed:
// OnNext with the flags that keep its continuation from recursing), and the sequential style
// (Accept, then Topic.Next and WriteMessage in a loop: the handler's coroutine parked in Next).
// A Feed's connection holds no goroutine (the sequential style's, one each), and costs little
// more than the hand-written one, which has no backpressure: under 1 KiB over the keep-alive
// connection, where the sequential style's coroutine alone is 2 KiB of stack.
func TestFollowFootprint(t *testing.T) {
	if testing.Short() {
		t.Skip("long")
	}
	if !strings.Contains(os.Getenv("GODEBUG"), fixedStackStart) {
		// As TestIdleFootprint: in a process of its own, with the runtime's fixed 2 KiB start.
		cmd := exec.Command(os.Args[0], "-test.run=^TestFollowFootprint$", "-test.v")
		cmd.Env = append(os.Environ(), "GODEBUG="+strings.TrimPrefix(os.Getenv("GODEBUG")+","+fixedStackStart, ","))
		out, err := cmd.CombinedOutput()
		t.Logf("in a process of its own:\n%s", out)
		if err != nil {
			t.Fatal(err)
		}
		return
	}
	const n = 1000
	per := map[string]float64{}
	for _, tc := range []struct {
		name  string
		h     func(tp *wait.Topic[string]) func(*core.Ctx)
		bound float64 // bytes per connection over an idle keep-alive connection
	}{
		{"feed", func(tp *wait.Topic[string]) func(*core.Ctx) {
			f := &Feed[string]{Topic: tp, Encode: appendMsgs}
			ev := &Events{}
			return func(cx *core.Ctx) {
				if c, err := Serve(cx, nil, ev); err == nil {
					f.Follow(cx, c, 0)
				}
			}
		}, 1024},
		{"hand-written", func(tp *wait.Topic[string]) func(*core.Ctx) {
			ev := &Events{}
			return func(cx *core.Ctx) {
				if c, err := Serve(cx, nil, ev); err == nil {
					(&handFollower{tp: tp, conn: c}).follow(cx, 0)
				}
			}
		}, 1024},
		{"sequential", func(tp *wait.Topic[string]) func(*core.Ctx) {
			return func(cx *core.Ctx) {
				c, err := Accept(cx, nil)
				if err != nil {
					return
				}
				for cursor := uint64(0); ; {
					msgs, last, err := tp.Next(cx, cursor, 0)
					if err != nil || c.WriteMessage(Text, appendMsgs(nil, msgs, last, err)) != nil {
						return
					}
					cursor = last
				}
			}
		}, 8192},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tp := wait.NewTopic[string](4)
			tp.Publish("hello")
			follow := tc.h(tp)
			conns, buf := footprintConns(t, follow, n)
			upgradeReq := upgradeRequest("/ws")
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			goroutines := runtime.NumGoroutine()
			for _, c := range conns {
				// The first message is sent once the follower waits for the next one.
				roundTrip(t, c, buf, upgradeReq, "\r\n\r\n\x81\x05hello")
			}
			goroutines = runtime.NumGoroutine() - goroutines
			runtime.GC()
			runtime.ReadMemStats(&after)
			heap := float64(int64(after.HeapInuse)-int64(before.HeapInuse)) / n
			stack := float64(int64(after.StackInuse)-int64(before.StackInuse)) / n
			per[tc.name] = heap + stack
			t.Logf("%s: %.0f B of heap and %.0f B of stacks per following connection, over an idle keep-alive connection; %d goroutines more for %d connections",
				tc.name, heap, stack, goroutines, n)
			if wantGoroutines := tc.name == "sequential"; (goroutines >= n*9/10) != wantGoroutines {
				t.Errorf("%d goroutines for %d connections following, %s", goroutines, n, tc.name)
			}
			if heap+stack > tc.bound {
				t.Errorf("a connection following a topic, %s, costs %.0f B over an idle keep-alive connection, over %.0f B", tc.name, heap+stack, tc.bound)
			}
		})
	}
	if f, s := per["feed"], per["sequential"]; f > 0 && s > 0 && f > s/2 {
		t.Errorf("a Feed's follower costs %.0f B, the sequential style's %.0f B", f, s)
	}
}

// appendMsgs encodes a batch as its messages, end to end.
func appendMsgs(b []byte, msgs []string, _ uint64, _ error) []byte {
	for _, m := range msgs {
		b = append(b, m...)
	}
	return b
}

// A handFollower follows a topic as examples/chat's socket did before the Feed: OnNext, whose
// continuation keeps what it gives before OnNext returns, so that follow loops rather than
// recurses.
type handFollower struct {
	tp          *wait.Topic[string]
	conn        *Conn
	inline, got bool
	msgs        []string
	last        uint64
	err         error
}

func (s *handFollower) follow(c *core.Ctx, cursor uint64) {
	for {
		s.inline, s.got = true, false
		s.tp.OnNext(c, cursor, 0, s.deliver)
		s.inline = false
		if !s.got {
			return
		}
		msgs, last, err := s.msgs, s.last, s.err
		s.msgs = nil
		if err != nil || s.conn.Send(Text, appendMsgs(nil, msgs, last, err)) >= SendDropped {
			return
		}
		cursor = last
	}
}

func (s *handFollower) deliver(c *core.Ctx, msgs []string, last uint64, err error) {
	if s.inline {
		s.got, s.msgs, s.last, s.err = true, msgs, last, err
		return
	}
	if err == nil && s.conn.Send(Text, appendMsgs(nil, msgs, last, err)) < SendDropped {
		s.follow(c, last)
	}
}
