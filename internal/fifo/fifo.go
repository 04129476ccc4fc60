// Package fifo is the first-in, first-out queue of the worker pool (internal/workers, behind
// wait.Do and the net/http bridge): a slice consumed from the front, reused once empty and
// compacted when the consumed front outgrows what waits, so that a queue that never empties
// stays bounded.
package fifo

// A Queue holds values in the order they were pushed. Its zero value is an empty queue. It is
// not safe for concurrent use: its owner locks around it.
type Queue[T any] struct {
	items []T
	head  int // items[head:] wait
}

// Push adds v at the back.
func (q *Queue[T]) Push(v T) { q.items = append(q.items, v) }

// Len returns the number of values waiting.
func (q *Queue[T]) Len() int { return len(q.items) - q.head }

// Pop takes the value at the front; the queue must not be empty.
func (q *Queue[T]) Pop() T {
	v := q.items[q.head]
	var zero T
	q.items[q.head] = zero // the queue keeps no reference to what it gave out
	q.head++
	switch {
	case q.head == len(q.items):
		q.items = q.items[:0]
		q.head = 0
	case q.head >= 64 && q.head*2 >= len(q.items):
		n := copy(q.items, q.items[q.head:])
		clear(q.items[n:])
		q.items = q.items[:n]
		q.head = 0
	}
	return v
}

// DeleteFunc removes the waiting values for which del returns true, keeping the others in
// order, and returns how many it removed. It costs a pass over what waits.
func (q *Queue[T]) DeleteFunc(del func(T) bool) int {
	kept := q.items[:0]
	for _, v := range q.items[q.head:] {
		if !del(v) {
			kept = append(kept, v)
		}
	}
	clear(q.items[len(kept):]) // the queue keeps no reference to what it removed
	removed := q.Len() - len(kept)
	q.items, q.head = kept, 0
	return removed
}
