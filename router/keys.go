package router

import (
	"math/bits"
	"unsafe"

	"github.com/dwellhttp/dwell/core"
)

// A keyTable maps marker closure addresses to the routes' final handlers. It is built once,
// when the router is frozen, and is what every hit pays for besides httprouter's lookup: an
// open-addressed table hashed by a multiply, measured several nanoseconds faster than a Go map
// here, holding the handler itself so that a hit makes no further hop through the route. Keys
// are addresses of heap closures, which the garbage collector never moves.
type keyTable struct {
	slots []keySlot
	shift uint // 64 - log2(len(slots))
}

type keySlot struct {
	key unsafe.Pointer
	h   core.Handler
}

// newKeyTable returns a table of every route's marker, at most half full so that probe runs
// stay short. The routes' final handlers must be built.
func newKeyTable(routes []*route) keyTable {
	n := 1 << bits.Len(uint(2*len(routes)))
	t := keyTable{slots: make([]keySlot, n), shift: uint(64 - bits.TrailingZeros(uint(n)))}
	for _, rt := range routes {
		i := t.index(rt.key)
		for t.slots[i].key != nil {
			i = (i + 1) & (len(t.slots) - 1)
		}
		t.slots[i] = keySlot{rt.key, rt.final}
	}
	return t
}

func (t *keyTable) index(k unsafe.Pointer) int {
	return int(uint64(uintptr(k)) * 0x9e3779b97f4a7c15 >> t.shift)
}

// get returns the handler of the route whose marker is at k; every key a tree returns is in
// the table.
func (t *keyTable) get(k unsafe.Pointer) core.Handler {
	for i := t.index(k); ; i = (i + 1) & (len(t.slots) - 1) {
		if s := &t.slots[i]; s.key == k {
			return s.h
		}
	}
}
