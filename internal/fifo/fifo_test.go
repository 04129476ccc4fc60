package fifo

import "testing"

// TestOrderAndBound: values come out in the order they went in, across the reuse of an emptied
// queue and the compaction of one that never empties, whose slice stays bounded.
func TestOrderAndBound(t *testing.T) {
	var q Queue[*int]
	next, want := 0, 0
	push := func(n int) {
		for range n {
			v := next
			q.Push(&v)
			next++
		}
	}
	pop := func(n int) {
		for range n {
			if got := *q.Pop(); got != want {
				t.Fatalf("popped %d, want %d", got, want)
			}
			want++
		}
	}
	push(3)
	pop(3)
	if q.Len() != 0 || len(q.items) != 0 {
		t.Fatalf("emptied queue: Len %d, %d items kept", q.Len(), len(q.items))
	}
	// Always 10 waiting, 100,000 through: the slice must not grow with what went through.
	push(10)
	for range 100_000 {
		push(1)
		pop(1)
	}
	if q.Len() != 10 {
		t.Fatalf("Len %d, want 10", q.Len())
	}
	if cap(q.items) > 256 {
		t.Fatalf("a queue of 10 holds a slice of %d", cap(q.items))
	}
	for i := range q.head {
		if q.items[i] != nil {
			t.Fatalf("consumed slot %d still holds a value", i)
		}
	}
	pop(10)
}
