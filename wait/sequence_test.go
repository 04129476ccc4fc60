package wait

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/core/coretest"
)

// seqHandler answers GET /?after=N&ms=T with "value;err" once Sequence.Wait returns, or, for
// the path /k, once OnWait's continuation runs.
func seqHandler(s *Sequence) core.Handler {
	return func(c *core.Ctx) {
		after, _ := strconv.ParseUint(c.Query("after"), 10, 64)
		ms, _ := strconv.Atoi(c.Query("ms"))
		reply := func(c *core.Ctx, err error) { fmt.Fprintf(c, "%d;%s", s.Value(), errString(err)) }
		if c.Path() == "/k" {
			s.OnWait(c, after, time.Duration(ms)*time.Millisecond, reply)
			return
		}
		reply(c, s.Wait(c, after, time.Duration(ms)*time.Millisecond))
	}
}

func TestSequenceWait(t *testing.T) {
	for _, path := range []string{"/", "/k"} {
		t.Run(path, func(t *testing.T) {
			var s Sequence
			_, addr := coretest.Serve(t, seqHandler(&s), core.Options{Loops: 1})
			s.Advance(5)
			if got := roundTrip(t, addr, path+"?after=4&ms=60000"); got != "5;nil" {
				t.Fatalf("a cursor the sequence has passed: %q", got)
			}
			c := dial(t, addr)
			c.get(path + "?after=5&ms=60000")
			coretest.WaitFor(t, "parked", func() bool { return s.waiting() == 1 })
			s.Advance(3) // lower: changes nothing
			if v := s.Value(); v != 5 {
				t.Fatalf("Advance(3) took the sequence from 5 to %d", v)
			}
			go s.Advance(9)
			if _, got := c.response(); got != "9;nil" {
				t.Fatal(got)
			}
			start := time.Now()
			if got := roundTrip(t, addr, path+"?after=9&ms=80"); got != "9;"+ErrTimeout.Error() {
				t.Fatal(got)
			}
			if d := time.Since(start); d < 75*time.Millisecond {
				t.Fatalf("timed out after %v", d)
			}
			coretest.WaitFor(t, "waiters unlinked", s.idle)
		})
	}
}

// TestSequenceCursorsAnyOrder: waiters whose cursors arrive out of order (a cursor ahead of the
// sequence, then lower ones) are each woken exactly when the sequence passes their own cursor,
// in both forms and mixed on one loop.
func TestSequenceCursorsAnyOrder(t *testing.T) {
	var s Sequence
	_, addr := coretest.Serve(t, seqHandler(&s), core.Options{Loops: 1})
	s.Advance(4)
	targets := []string{"/?after=10", "/k?after=5", "/?after=7", "/k?after=10", "/?after=4"}
	conns := make([]*client, len(targets))
	for i, target := range targets {
		conns[i] = dial(t, addr)
		conns[i].get(target + "&ms=60000")
		coretest.WaitFor(t, "parked", func() bool { return s.waiting() == i+1 })
	}
	woken := 0
	for _, step := range []struct {
		to   uint64
		wake []int // indexes into targets
	}{{5, []int{4}}, {6, []int{1}}, {8, []int{2}}, {11, []int{0, 3}}} {
		s.Advance(step.to)
		for _, i := range step.wake {
			if _, got := conns[i].response(); got != fmt.Sprintf("%d;nil", step.to) {
				t.Fatalf("%s after Advance(%d): %q", targets[i], step.to, got)
			}
		}
		woken += len(step.wake)
		// The others stay parked: a drain that woke one too many would have answered it.
		if n := s.waiting(); n != len(targets)-woken {
			t.Fatalf("after Advance(%d): %d waiting, want %d", step.to, n, len(targets)-woken)
		}
	}
}
