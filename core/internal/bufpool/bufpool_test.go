package bufpool

import (
	"slices"
	"testing"
)

// TestClassOf checks the table lookup against the plain definition: the smallest class that
// holds n bytes.
func TestClassOf(t *testing.T) {
	if bufClasses[firstPow2Class] != 4096 {
		t.Fatalf("firstPow2Class points at %d", bufClasses[firstPow2Class])
	}
	for n := 0; n <= 70000; n++ {
		want, _ := slices.BinarySearch(bufClasses[:], n)
		if want == len(bufClasses) {
			want = -1
		}
		if got := classOf(n); got != want {
			t.Fatalf("classOf(%d) = %d, want %d", n, got, want)
		}
	}
}

func TestBufPoolRecycles(t *testing.T) {
	var p Pool
	b := p.Get(100)
	if cap(b) != 112 || len(b) != 0 {
		t.Fatalf("get(100): len %d cap %d, want 0 and 112 (the allocator's class)", len(b), cap(b))
	}
	p.Put(b)
	if c := p.Get(97); &c[:1][0] != &b[:1][0] {
		t.Fatal("a buffer of the same class was not reused")
	}
	p.Put(make([]byte, 0, 100)) // not a class size: left to the collector
	if n := len(p.free[classOf(100)]); n != 0 {
		t.Fatalf("%d buffers kept after putting an odd one", n)
	}
}
