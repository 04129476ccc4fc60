package engine

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestHeap arms, moves and stops timers at random and checks that they fall due in the order of
// their deadlines, each once, and that a stopped or moved timer falls due as it now stands.
func TestHeap(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var h Heap
	timers := make([]Timer, 500)
	want := map[*Timer]int64{} // the armed timers and their deadlines
	for i := range timers {
		timers[i].Init(uint8(i % 3))
	}
	for range 5000 {
		tm := &timers[r.IntN(len(timers))]
		switch r.IntN(3) {
		case 0, 1:
			when := r.Int64N(1000)
			h.Set(tm, when)
			want[tm] = when
		case 2:
			h.Stop(tm)
			delete(want, tm)
		}
		if _, armed := want[tm]; tm.Armed() != armed {
			t.Fatalf("Armed %v after the operation, want %v", tm.Armed(), armed)
		}
	}
	if next, ok := h.Next(); ok != (len(want) > 0) {
		t.Fatalf("Next: %d, %v with %d armed", next, ok, len(want))
	}
	var got, expect []int64
	for _, when := range want {
		expect = append(expect, when)
	}
	slices.Sort(expect)
	for now := int64(0); now < 1000; now += 7 {
		for tm := h.PopDue(now); tm != nil; tm = h.PopDue(now) {
			if tm.When() > now || tm.Armed() {
				t.Fatalf("popped at %d a timer due at %d (armed %v)", now, tm.When(), tm.Armed())
			}
			if _, ok := want[tm]; !ok {
				t.Fatal("popped a timer that was not armed")
			}
			delete(want, tm)
			got = append(got, tm.When())
		}
	}
	for tm := h.PopDue(1 << 62); tm != nil; tm = h.PopDue(1 << 62) {
		delete(want, tm)
		got = append(got, tm.When())
	}
	if !slices.Equal(got, expect) || len(want) != 0 {
		t.Fatalf("fell due %v, want %v (%d never)", got, expect, len(want))
	}
	if _, ok := h.Next(); ok {
		t.Fatal("Next: a timer left after every one fell due")
	}
}
