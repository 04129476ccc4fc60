package engine

import (
	"slices"
	"sync"
	"testing"
)

// TestInbox: posts from many goroutines are all taken, each goroutine's in its order; a closed
// inbox refuses posts and hands back what was never taken.
func TestInbox(t *testing.T) {
	ib, err := NewInbox[[2]int]()
	if err != nil {
		t.Fatal(err)
	}
	const senders, each = 4, 1000
	var wg sync.WaitGroup
	for s := range senders {
		wg.Go(func() {
			for i := range each {
				if !ib.Post([2]int{s, i}) {
					t.Error("a post refused before the close")
				}
			}
		})
	}
	wg.Wait()
	next := make([]int, senders)
	for q := ib.Take(); len(q) > 0; q = ib.Take() {
		for _, v := range q {
			if v[1] != next[v[0]] {
				t.Fatalf("sender %d's post %d taken when %d was due", v[0], v[1], next[v[0]])
			}
			next[v[0]]++
		}
		ib.Recycle(q)
	}
	if !slices.Equal(next, []int{each, each, each, each}) {
		t.Fatalf("taken %v", next)
	}
	ib.Post([2]int{9, 9})
	if left := ib.Close(); len(left) != 1 || left[0] != [2]int{9, 9} {
		t.Fatalf("Close handed back %v", left)
	}
	if ib.Post([2]int{1, 1}) {
		t.Fatal("a post accepted after the close")
	}
}
