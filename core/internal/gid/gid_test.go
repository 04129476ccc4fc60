package gid

import (
	"iter"
	"testing"
)

// TestSelfTellsGoroutinesApart: a goroutine, another goroutine alive at the same time and a
// coroutine (the kind core runs handlers in) each have their own value, which stays the same
// across the coroutine's suspensions.
func TestSelfTellsGoroutinesApart(t *testing.T) {
	main := Self()
	if main == 0 || Self() != main {
		t.Fatalf("Self() = %#x, then %#x: want a stable non-zero value", main, Self())
	}
	got := make(chan uintptr)
	release := make(chan struct{})
	go func() {
		got <- Self()
		<-release // alive while the others are compared with it
	}()
	other := <-got
	defer close(release)
	var co []uintptr
	next, stop := iter.Pull(func(yield func(struct{}) bool) {
		for range 3 {
			co = append(co, Self())
			if !yield(struct{}{}) {
				return
			}
		}
	})
	defer stop()
	for range 3 {
		next()
	}
	if other == 0 || other == main {
		t.Errorf("another goroutine has %#x, the test's has %#x", other, main)
	}
	for _, c := range co {
		if c != co[0] {
			t.Errorf("the coroutine's value changed across suspensions: %#x", co)
		}
	}
	if co[0] == main || co[0] == other {
		t.Errorf("the coroutine has %#x, like another goroutine (test %#x, other %#x)", co[0], main, other)
	}
}

// TestNumber: goroutine numbers (what Self is on wasm, and what the stall report finds stacks
// by) tell goroutines apart as well.
func TestNumber(t *testing.T) {
	main := Number()
	got := make(chan uint64)
	go func() { got <- Number() }()
	if other := <-got; main == 0 || other == 0 || other == main || Number() != main {
		t.Fatalf("goroutine numbers %d and %d", main, other)
	}
}

func BenchmarkSelf(b *testing.B) {
	var s uintptr
	for b.Loop() {
		s += Self()
	}
	_ = s
}
