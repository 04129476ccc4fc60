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
	if bufClasses[maxOwnedClass] != 65536 || bufClasses[len(bufClasses)-1] != MaxShared {
		t.Fatalf("maxOwnedClass points at %d, the last class is %d", bufClasses[maxOwnedClass], bufClasses[len(bufClasses)-1])
	}
	for _, n := range []int{1<<24 - 1, 1 << 24, 1<<24 + 1} {
		want, _ := slices.BinarySearch(bufClasses[:], n)
		if want == len(bufClasses) {
			want = -1
		}
		if got := classOf(n); got != want {
			t.Fatalf("classOf(%d) = %d, want %d", n, got, want)
		}
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

// TestOwnedPoolKeepsTo64KiB: a loop's pool keeps buffers up to 64 KiB; a larger one is made to
// measure and left to the collector.
func TestOwnedPoolKeepsTo64KiB(t *testing.T) {
	var p Pool
	b := p.Get(70000)
	if cap(b) != 70000 || SizeClass(70000) != 70000 {
		t.Fatalf("get(70000): cap %d, SizeClass %d; want 70000", cap(b), SizeClass(70000))
	}
	p.Put(make([]byte, 0, 1<<17))
	for c := range p.free {
		if len(p.free[c]) != 0 {
			t.Fatalf("class %d keeps a buffer after a 128 KiB one was put", bufClasses[c])
		}
	}
}

// TestSharedPool: Get's capacities, and a buffer given back on one goroutine taken on another;
// under the race detector it is poisoned and never reused.
func TestSharedPool(t *testing.T) {
	for _, tc := range []struct{ n, cap int }{{0, 64}, {100, 112}, {3000, 4096}, {1 << 20, 1 << 20}, {1<<24 + 1, 1<<24 + 1}} {
		if b := Get(tc.n); cap(b) != tc.cap || len(b) != 0 || Cap(tc.n) != tc.cap {
			t.Errorf("Get(%d): len %d cap %d, Cap %d; want 0 and %d", tc.n, len(b), cap(b), Cap(tc.n), tc.cap)
		}
	}
	b := append(Get(5000), "secret"...)
	done := make(chan struct{})
	go func() { Put(b); close(done) }()
	<-done
	if raceBuild {
		if string(b[:6]) != PoisonPattern[:6] {
			t.Fatalf("a buffer given back reads %q, want the poison", b[:6])
		}
		return
	}
	// sync.Pool may drop what it holds at any GC: the buffer comes back unless one ran.
	for range 100 {
		c := Get(4097)
		if cap(c) == 8192 && &c[:1][0] == &b[:1][0] {
			return
		}
		Put(b)
	}
	t.Fatal("a buffer given back was never taken again")
}
