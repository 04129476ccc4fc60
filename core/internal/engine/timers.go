package engine

// A Timer is a deadline in its loop's Heap. Timers live inside the structures they serve (a
// connection, a request, an application's callback), so arming one allocates nothing, and the
// poll's timeout is the earliest of them. Kind is the owner's to set and read: a timer that is
// the first field of its owner is then also a pointer to that owner, which Kind names, and a
// timer stays 16 bytes, where an interface to its owner would add 16 more to every connection
// and request.
type Timer struct {
	when  int64 // the loop's clock, nanoseconds
	index int32 // position in the heap; -1 when not armed
	Kind  uint8
}

// Init readies t, not armed, for an owner of kind k.
func (t *Timer) Init(k uint8) {
	t.index = -1
	t.Kind = k
}

// Armed reports whether t is in its heap.
func (t *Timer) Armed() bool { return t.index >= 0 }

// When returns the deadline t is armed for (or was last).
func (t *Timer) When() int64 { return t.when }

// A Heap is a loop's timers: a 4-ary min-heap of their deadlines. A 4-ary heap is shallower
// than a binary one, and a parent's four children are adjacent in the heap's slice of pointers
// (one cache line of them). The zero value is empty; NewHeap sizes it ahead.
type Heap struct{ h []*Timer }

// NewHeap returns a heap with room for n timers.
func NewHeap(n int) Heap { return Heap{h: make([]*Timer, 0, n)} }

// AppendDoubling appends v to s, doubling the capacity when it is full. The tables that grow
// with the number of connections (the timer heap, the descriptor tables) grow this way rather
// than by append's smaller steps for large slices: every step leaves the old array behind as
// garbage, which shows in the process's memory until a collection, and doubling leaves the
// least.
func AppendDoubling[T any](s []T, v T) []T {
	if len(s) == cap(s) {
		n := make([]T, len(s), max(2*cap(s), 1024))
		copy(n, s)
		s = n
	}
	return append(s, v)
}

// Next returns the earliest deadline, or false when no timer is armed.
func (th *Heap) Next() (int64, bool) {
	if len(th.h) == 0 {
		return 0, false
	}
	return th.h[0].when, true
}

// Set arms t for when, moving it if it is already armed.
func (th *Heap) Set(t *Timer, when int64) {
	if t.index >= 0 {
		old := t.when
		t.when = when
		if when < old {
			th.up(int(t.index))
		} else {
			th.down(int(t.index))
		}
		return
	}
	t.when = when
	t.index = int32(len(th.h))
	th.h = AppendDoubling(th.h, t)
	th.up(int(t.index))
}

// Stop disarms t; it is a no-op for a timer that is not armed.
func (th *Heap) Stop(t *Timer) {
	i := int(t.index)
	if i < 0 {
		return
	}
	last := len(th.h) - 1
	if i != last {
		th.h[i] = th.h[last]
		th.h[i].index = int32(i)
	}
	th.h[last] = nil
	th.h = th.h[:last]
	t.index = -1
	if i != last {
		th.down(i)
		th.up(i)
	}
}

// PopDue removes and returns the earliest timer if it is due at now, else nil.
func (th *Heap) PopDue(now int64) *Timer {
	if len(th.h) == 0 || th.h[0].when > now {
		return nil
	}
	t := th.h[0]
	th.Stop(t)
	return t
}

func (th *Heap) up(i int) {
	h := th.h
	t := h[i]
	for i > 0 {
		p := (i - 1) / 4
		if h[p].when <= t.when {
			break
		}
		h[i] = h[p]
		h[i].index = int32(i)
		i = p
	}
	h[i] = t
	t.index = int32(i)
}

func (th *Heap) down(i int) {
	h := th.h
	n := len(h)
	t := h[i]
	for {
		c := 4*i + 1
		if c >= n {
			break
		}
		m := c
		for j := c + 1; j < c+4 && j < n; j++ {
			if h[j].when < h[m].when {
				m = j
			}
		}
		if h[m].when >= t.when {
			break
		}
		h[i] = h[m]
		h[i].index = int32(i)
		i = m
	}
	h[i] = t
	t.index = int32(i)
}
