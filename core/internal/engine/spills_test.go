package engine

import "testing"

// TestSpills: handles are never 0, a released handle's slot serves the next buffer, and each
// handle stands for its own buffer until it is released.
func TestSpills(t *testing.T) {
	var s Spills
	var pool OutPool
	a, b := s.Hold(pool.Get(10)), s.Hold(pool.Get(20))
	if a == 0 || b == 0 || a == b {
		t.Fatalf("handles %d and %d", a, b)
	}
	s.Release(a, &pool)
	if c := s.Hold(pool.Get(30)); c != a {
		t.Errorf("a released slot is not reused: %d, freed %d", c, a)
	}
	if cap(s.bufs[b-1]) < 20 || s.bufs[b-1] == nil {
		t.Errorf("handle %d lost its buffer", b)
	}
	if d := s.Hold(pool.Get(40)); d == a || d == b {
		t.Errorf("a held slot is given again: %d", d)
	}
}
