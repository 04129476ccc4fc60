package bufpool

import (
	"sync"

	"github.com/dwellhttp/dwell/internal/alias"
)

// The shared pool: one sync.Pool per class, for buffers taken on one goroutine and given back on
// another. Between uses a buffer is held by a pointer to its first byte, which goes into an
// interface without an allocation where a slice would need one for its header, and keeps the
// whole array alive.
var shared [len(bufClasses)]sync.Pool

// PoisonPattern is what a buffer given back is overwritten with in builds with the race
// detector (race.go).
const PoisonPattern = "dwell:freed "

// MaxShared is the largest class of the shared pool: Get of more makes a buffer of its own,
// which Put leaves to the collector.
const MaxShared = 1 << 24

// Get returns an empty buffer with room for at least n bytes, from the shared pool: its
// capacity is Cap(n). Give it back with Put.
func Get(n int) []byte {
	c := classOf(n)
	if c < 0 {
		return make([]byte, 0, n)
	}
	if p, _ := shared[c].Get().(*byte); p != nil {
		// Its capacity is its class's, as Put checked when it went in.
		return alias.SliceAt(p, bufClasses[c])[:0]
	}
	return make([]byte, 0, bufClasses[c])
}

// Cap returns the capacity of the buffer Get(n) returns.
func Cap(n int) int {
	if c := classOf(n); c >= 0 {
		return bufClasses[c]
	}
	return n
}

// Put gives b back to the shared pool. Only a buffer of a class's exact capacity goes in (one
// from elsewhere is left to the collector), and b must not be used again: in builds with the
// race detector it is poisoned instead of kept.
func Put(b []byte) {
	n := cap(b)
	c := classOf(n)
	if c < 0 || bufClasses[c] != n {
		return
	}
	if raceBuild {
		Poison(b[:n])
		return
	}
	shared[c].Put(&b[:1][0])
}
