package core

import "math/bits"

// A bufPool recycles byte buffers in power-of-two size classes from 128 B to 64 KiB. Each loop has
// its own, used only by its goroutine, so it needs no locks. Spill buffers, head arenas and write
// queue chunks all come from here, which is how an idle connection holds no buffer at all: it
// takes one only for the bytes it is holding, and gives it back as soon as they are consumed.
type bufPool struct {
	free [numClasses][][]byte
}

const (
	minClassShift = 7  // 128 B
	maxClassShift = 16 // 64 KiB
	numClasses    = maxClassShift - minClassShift + 1
	// poolBytesPerClass bounds what one class keeps idle, so that a burst does not pin memory.
	poolBytesPerClass = 1 << 20
)

// classOf returns the class whose buffers hold n bytes, or -1 when n is over the largest.
func classOf(n int) int {
	if n <= 1<<minClassShift {
		return 0
	}
	c := bits.Len(uint(n-1)) - minClassShift
	if c >= numClasses {
		return -1
	}
	return c
}

// get returns an empty buffer with room for at least n bytes.
func (p *bufPool) get(n int) []byte {
	c := classOf(n)
	if c < 0 {
		return make([]byte, 0, n)
	}
	if f := p.free[c]; len(f) > 0 {
		b := f[len(f)-1]
		f[len(f)-1] = nil
		p.free[c] = f[:len(f)-1]
		return b
	}
	return make([]byte, 0, 1<<(c+minClassShift))
}

// put recycles b. Buffers that did not come from get (odd capacities) are left to the GC.
func (p *bufPool) put(b []byte) {
	n := cap(b)
	if n < 1<<minClassShift || n&(n-1) != 0 {
		return
	}
	c := classOf(n)
	if c < 0 || len(p.free[c])*n >= poolBytesPerClass {
		return
	}
	p.free[c] = append(p.free[c], b[:0])
}
