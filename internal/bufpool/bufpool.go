package bufpool

import "math/bits"

// A Pool recycles byte buffers by size class. Each loop has its own, used only by its
// goroutine, so it needs no locks. Request heads, spill buffers and output chunks all come from
// here, which is how an idle connection holds no buffer at all: it takes one only for the bytes
// it is holding, and gives it back as soon as they are consumed.
//
// Up to 2 KiB the classes are the Go allocator's own, so a buffer sized for a 150-byte request
// head costs 160 bytes, not 256; above that they are powers of two up to 64 KiB (16 MiB for the
// shared pool: shared.go).
type Pool struct {
	free [maxOwnedClass + 1][][]byte
}

var bufClasses = [...]int{
	64, 80, 96, 112, 128, 144, 160, 176, 192, 208, 224, 240, 256, 288, 320, 352, 384, 416, 448,
	480, 512, 576, 640, 704, 768, 896, 1024, 1152, 1280, 1408, 1536, 1792, 2048,
	4096, 8192, 16384, 32768, 65536,
	1 << 17, 1 << 18, 1 << 19, 1 << 20, 1 << 21, 1 << 22, 1 << 23, 1 << 24,
}

// maxOwnedClass is the largest class a Pool (a loop's) keeps: a loop's buffers hold what one
// read or one response chunk carries. The shared pool (Get, Put) keeps the larger ones too,
// for messages gathered whole.
const maxOwnedClass = 37 // 65536

// poolBytesPerClass bounds what one class keeps idle, so that a burst does not pin memory.
const poolBytesPerClass = 1 << 20

// SizeClass returns the capacity of the buffers Pool.Get returns for n bytes: up to 2 KiB, the
// size the Go allocator gives an object of n bytes.
func SizeClass(n int) int {
	if c := classOf(n); c >= 0 && c <= maxOwnedClass {
		return bufClasses[c]
	}
	return n
}

// classOf returns the class whose buffers hold n bytes, or -1 when n is over the largest.
func classOf(n int) int {
	switch {
	case n <= 2048:
		return int(smallClass[(max(n, 0)+15)/16])
	case n <= 1<<24:
		return firstPow2Class + bits.Len(uint(n-1)) - 12 // 4096 is 1<<12
	}
	return -1
}

// smallClass maps ceil(n/16) to the class of n for n up to 2 KiB: a load instead of a search on
// every buffer taken or given back.
var smallClass = func() (t [2048/16 + 1]uint8) {
	c := 0
	for i := range t {
		for bufClasses[c] < i*16 {
			c++
		}
		t[i] = uint8(c)
	}
	return t
}()

// firstPow2Class is the index of 4096 in bufClasses, where the classes become powers of two.
const firstPow2Class = 33

// Get returns an empty buffer with room for at least n bytes.
func (p *Pool) Get(n int) []byte {
	c := classOf(n)
	if c < 0 || c > maxOwnedClass {
		return make([]byte, 0, n)
	}
	if f := p.free[c]; len(f) > 0 {
		b := f[len(f)-1]
		f[len(f)-1] = nil
		p.free[c] = f[:len(f)-1]
		return b
	}
	return make([]byte, 0, bufClasses[c])
}

// Put recycles b. Buffers that did not come from get (other capacities) are left to the GC.
func (p *Pool) Put(b []byte) {
	n := cap(b)
	c := classOf(n)
	if c < 0 || c > maxOwnedClass || bufClasses[c] != n || len(p.free[c])*n >= poolBytesPerClass {
		return
	}
	p.free[c] = append(p.free[c], b[:0])
}

// GetArena returns an empty buffer for a request head of n bytes with its table and scratch:
// from the loop's pool, like every other buffer; under the race detector (race.go) a fresh one,
// never a recycled one.
func GetArena(pool *Pool, n int) []byte {
	if raceBuild {
		return make([]byte, 0, n)
	}
	return pool.Get(n)
}

// PutArena gives back a request's arena once the request has ended: its borrowed values end
// here. Under the race detector it is poisoned instead, and left to the collector.
func PutArena(pool *Pool, b []byte) {
	if raceBuild {
		Poison(b[:cap(b)])
		return
	}
	pool.Put(b)
}

// Poison overwrites b with PoisonPattern under the race detector, and does nothing otherwise:
// for memory lent for a call and reused after it, such as a loop's read buffer lent to a
// WebSocket's Events.Message.
func Poison(b []byte) {
	if !raceBuild {
		return
	}
	for i := range b {
		b[i] = PoisonPattern[i%len(PoisonPattern)]
	}
}
