package jetstream

import "sort"

// A history is what a Topic holds in memory: every message of its subject with a sequence
// number in (floor, last], oldest first, less those Decode refused, in a ring of at most
// cap(ents) entries. It is guarded by the Topic's mu.
type history[T any] struct {
	ents  []entry[T] // ents[(head+i)%len(ents)] for i < n
	head  int
	n     int
	floor uint64 // every message after it up to last is here
	last  uint64 // the last sequence number received
}

// An entry is a message as Decode made it, with its sequence number.
type entry[T any] struct {
	seq uint64
	v   T
}

func newHistory[T any](size int, floor uint64) history[T] {
	return history[T]{ents: make([]entry[T], size), floor: floor, last: floor}
}

// add appends message seq, which is after last; keep is false for a message Decode refused,
// which only moves last. When the ring is full the oldest entry goes, and floor with it.
func (h *history[T]) add(seq uint64, v T, keep bool) {
	h.last = seq
	if !keep {
		return
	}
	if h.n == len(h.ents) {
		h.floor = h.ents[h.head].seq
		h.ents[h.head] = entry[T]{} // drop the reference at once
		h.head = (h.head + 1) % len(h.ents)
		h.n--
	}
	h.ents[(h.head+h.n)%len(h.ents)] = entry[T]{seq, v}
	h.n++
}

// covers reports whether the messages after the cursor are all here (or none has come yet).
func (h *history[T]) covers(after uint64) bool {
	return after >= h.floor && after <= h.last
}

// since copies out the messages after the cursor, which the history covers.
func (h *history[T]) since(after uint64) []T {
	at := func(i int) *entry[T] { return &h.ents[(h.head+i)%len(h.ents)] }
	first := sort.Search(h.n, func(i int) bool { return at(i).seq > after })
	if first == h.n {
		return nil
	}
	msgs := make([]T, 0, h.n-first)
	for i := first; i < h.n; i++ {
		msgs = append(msgs, at(i).v)
	}
	return msgs
}
