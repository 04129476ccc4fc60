package labels

import (
	"fmt"
	"sync"
	"testing"
)

// TestBound: a cache keeps at most its bound of values, and makes the others on each use.
func TestBound(t *testing.T) {
	const max = 64
	made := 0
	c := New(func(k int) string { made++; return fmt.Sprint(k) }, max)
	for range 2 {
		for i := range max + 10 {
			if got := c.Get(i); got != fmt.Sprint(i) {
				t.Fatalf("Get(%d) = %q", i, got)
			}
		}
	}
	if n := c.Len(); n != max {
		t.Fatalf("%d values kept, want %d", n, max)
	}
	if want := max + 2*10; made != want {
		t.Fatalf("%d values made, want %d", made, want)
	}
}

// TestConcurrentMisses: goroutines missing the same keys at once get one value per key.
func TestConcurrentMisses(t *testing.T) {
	var mu sync.Mutex
	made := map[int]int{}
	c := New(func(k int) *int { mu.Lock(); made[k]++; mu.Unlock(); return new(int) }, 0)
	var wg sync.WaitGroup
	got := make([][]*int, 8)
	for g := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range 100 {
				got[g] = append(got[g], c.Get(k))
			}
		}()
	}
	wg.Wait()
	for k := range 100 {
		if made[k] != 1 {
			t.Fatalf("key %d made %d times", k, made[k])
		}
		for g := range got {
			if got[g][k] != got[0][k] {
				t.Fatalf("key %d: goroutines got different values", k)
			}
		}
	}
}

func TestAllocs(t *testing.T) {
	c := New(func(k string) int { return len(k) }, 0)
	c.Get("/todos/:id")
	if n := testing.AllocsPerRun(100, func() { c.Get("/todos/:id") }); n != 0 {
		t.Fatalf("%v allocations per hit", n)
	}
}

// TestAll: All yields every value kept, once, with its key, and none past the bound.
func TestAll(t *testing.T) {
	c := New(func(k int) string { return fmt.Sprint(k) }, 8)
	for i := range 12 {
		c.Get(i)
	}
	seen := map[int]bool{}
	for k, v := range c.All() {
		if v != fmt.Sprint(k) || seen[k] || k >= 8 {
			t.Fatalf("All yielded %d: %q (seen %v)", k, v, seen)
		}
		seen[k] = true
	}
	if len(seen) != 8 {
		t.Fatalf("All yielded %d values, want the 8 kept", len(seen))
	}
}
