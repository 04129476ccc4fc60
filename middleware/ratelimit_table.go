package middleware

import (
	"sync"
)

// The rate limiter's state: one GCRA "theoretical arrival time" per key, in a table of fixed
// size allocated once, so that its memory is the same with ten keys or ten million.
//
// The table is an array of buckets of rateWays entries, each bucket under a lock of its own: a
// key's hash picks its bucket, and the loops, which run handlers on several goroutines, meet
// only when two of them take the same bucket at once. An entry is the key's 64-bit hash and
// its arrival time; the key itself is never kept (no copy, no allocation, nothing borrowed held).
//
// A key's state is worth keeping only while the key is in debt — its arrival time is ahead of
// the clock — since a key whose time has passed is exactly a key never seen. So a key new to its
// bucket takes the entry whose time is earliest: an empty one, or one whose key has recovered,
// or, when every key of the bucket is in debt, the key closest to recovering. That key's debt is
// forgotten: when it comes back it starts afresh, having gained the wait it had left, the
// smallest of its bucket. See RateLimit's doc for what that means against a flood of keys.

// rateWays is how many keys share a bucket: enough that a bucket is rarely all in debt when
// the table is not, few enough that a lookup reads two cache lines.
const rateWays = 8

// rateBucketBytes is a bucket's size: its lock and its entries (TestRateTableSize checks it).
const rateBucketBytes = 136

// rateBytesPerKey is the table's size per key it holds, rounded up.
const rateBytesPerKey = (rateBucketBytes + rateWays - 1) / rateWays

// A rateEntry is one key's state: its hash, with the low bit set so that 0 means empty, and
// its theoretical arrival time in nanoseconds since the limiter was made.
type rateEntry struct {
	tag uint64
	tat int64
}

// A rateBucket holds the keys whose hash falls in it.
type rateBucket struct {
	mu sync.Mutex
	e  [rateWays]rateEntry
}

// A rateTable is the fixed array of buckets.
type rateTable struct {
	buckets []rateBucket
}

// newRateTable returns a table for maxKeys keys, rounded up to whole buckets.
func newRateTable(maxKeys int) *rateTable {
	return &rateTable{buckets: make([]rateBucket, (maxKeys+rateWays-1)/rateWays)}
}

// bucket returns the bucket of hash h: its high 32 bits scaled to the bucket count, which
// needs no power of two. The entries compare the whole hash.
func (t *rateTable) bucket(h uint64) *rateBucket {
	return &t.buckets[(h>>32)*uint64(len(t.buckets))>>32]
}

// take spends one request of the key hashed h at now, by GCRA: the key's arrival time moves
// interval ahead (from now, if it had fallen behind), unless that would put it more than window
// ahead of now, in which case the request is refused and nothing changes — a refused request
// costs nothing, so a client that retries at once is not pushed further back. It returns the
// key's debt afterwards (how far its arrival time is ahead of now) and whether the request
// passed.
func (t *rateTable) take(h uint64, now, interval, window int64) (debt int64, ok bool) {
	tag := h | 1
	b := t.bucket(h)
	b.mu.Lock()
	e := b.entry(tag)
	tat := max(e.tat, now)
	next := tat + interval
	if next-now > window {
		b.mu.Unlock()
		return tat - now, false
	}
	e.tat = next
	b.mu.Unlock()
	return next - now, true
}

// entry returns tag's entry in b, or, for a key b does not hold, the entry with the earliest
// arrival time (empty, recovered, or the closest to recovering), given to tag with no debt.
// b.mu is held.
func (b *rateBucket) entry(tag uint64) *rateEntry {
	victim := &b.e[0]
	for i := range b.e {
		e := &b.e[i]
		if e.tag == tag {
			return e
		}
		if e.tat < victim.tat {
			victim = e
		}
	}
	// An empty entry's time is 0, the limiter's start, so it is taken before any key in debt;
	// a recovered key's time is in the past: forgetting it loses nothing.
	*victim = rateEntry{tag: tag}
	return victim
}
