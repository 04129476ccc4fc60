package websocket

import (
	"math/bits"
	"sync"

	"github.com/dwellhttp/dwell/internal/alias"
)

// Message buffers: a message that does not arrive whole in one read is gathered in a buffer, a
// message compressed or inflated is written into one, and each goes back to a pool once its
// message is delivered or sent. Between messages a connection holds none. The pools are by
// power-of-two size class, from 512 bytes to 16 MiB; a larger buffer is the collector's.

const (
	minClassShift = 9  // 512 bytes
	maxClassShift = 24 // 16 MiB
)

var bufPools [maxClassShift - minClassShift + 1]sync.Pool

// classOf returns the size class of a buffer of at least n bytes, and false past the largest.
func classOf(n int) (int, bool) {
	if n <= 1<<minClassShift {
		return 0, true
	}
	shift := bits.Len(uint(n - 1))
	return shift - minClassShift, shift <= maxClassShift
}

// getBuf returns an empty buffer of capacity at least n.
func getBuf(n int) []byte {
	class, ok := classOf(n)
	if !ok {
		return make([]byte, 0, n)
	}
	if p, _ := bufPools[class].Get().(*byte); p != nil {
		// The pool holds the buffer's first byte; its capacity is its class's size, as putBuf
		// checked when it went in, and the pointer kept the whole array alive meanwhile.
		return alias.SliceAt(p, 1<<(class+minClassShift))[:0]
	}
	return make([]byte, 0, 1<<(class+minClassShift))
}

// bufCap returns the capacity of the buffer getBuf(n) returns.
func bufCap(n int) int {
	class, ok := classOf(n)
	if !ok {
		return n
	}
	return 1 << (class + minClassShift)
}

// putBuf gives b back to its pool. Only buffers of a class's exact capacity go in (a buffer
// from elsewhere is left to the collector), and b must not be used again: in builds with the
// race detector it is poisoned instead (see buffers_race.go).
func putBuf(b []byte) {
	c := cap(b)
	if c < 1<<minClassShift || c&(c-1) != 0 {
		return
	}
	class, ok := classOf(c)
	if !ok {
		return
	}
	if poisonBuffers {
		poison(b[:c])
		return
	}
	// A pointer goes into an interface without an allocation, where a slice would need one for
	// its header; the pointer keeps the array alive while the pool holds it.
	bufPools[class].Put(&b[:1][0])
}

// appendBuf appends p to a message buffer, moving it to a larger class when it is full. It
// returns a buffer even for an empty p, so that a message under way is never nil.
func appendBuf(b, p []byte) []byte {
	if b == nil {
		b = getBuf(len(p))
	} else if len(b)+len(p) > cap(b) {
		nb := getBuf(max(len(b)+len(p), 2*cap(b)))
		nb = append(nb, b...)
		putBuf(b)
		b = nb
	}
	return append(b, p...)
}
