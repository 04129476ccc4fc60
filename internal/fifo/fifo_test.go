package fifo

import (
	"slices"
	"testing"
)

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

// TestDeleteFunc: the values removed are gone and referenced no more, the rest come out in
// order, and the queue goes on as before.
func TestDeleteFunc(t *testing.T) {
	var q Queue[*int]
	for i := range 10 {
		q.Push(&i)
	}
	q.Pop()
	q.Pop() // 2 consumed: DeleteFunc must see only what waits
	if n := q.DeleteFunc(func(v *int) bool { return *v%2 == 1 }); n != 4 {
		t.Fatalf("removed %d, want 4 (3, 5, 7, 9)", n)
	}
	for i := q.Len(); i < len(q.items[:cap(q.items)]); i++ {
		if q.items[:cap(q.items)][i] != nil {
			t.Fatalf("slot %d still holds %d", i, *q.items[:cap(q.items)][i])
		}
	}
	q.Push(new(10))
	var got []int
	for q.Len() > 0 {
		got = append(got, *q.Pop())
	}
	if want := []int{2, 4, 6, 8, 10}; !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}
