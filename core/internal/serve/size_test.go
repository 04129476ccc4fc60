package serve

import (
	"testing"
	"unsafe"

	"github.com/dwellhttp/dwell/core/internal/wire"
)

// TestStructSizes pins the memory budget of what every connection and every request holds: an
// idle connection is a Socket alone, a parked request adds a Ctx (the targets: idle ≤ 0.5 KiB, a
// parked continuation with its connection ≤ 0.6 KB). The Ctx's 208 bytes are a size class of Go's
// allocator: 16 of them hold what it is served on (Ctx.Exchange: an HTTP/1.1 connection or an
// HTTP/2 stream, as an interface) beside the exchange's Carrier (Ctx.Carrier), which the hot
// paths reach without a call.
func TestStructSizes(t *testing.T) {
	if n := unsafe.Sizeof(Socket{}); n > 144 {
		t.Errorf("conn is %d bytes; budget 144", n)
	}
	if n := unsafe.Sizeof(Ctx{}); n > 208 {
		t.Errorf("Ctx is %d bytes; budget 208", n)
	}
	// A parked coroutine-style request keeps its coro too.
	if n := unsafe.Sizeof(coro{}); n > 32 {
		t.Errorf("coro is %d bytes; budget 32", n)
	}
	t.Logf("conn %d B, Ctx %d B, request %d B, bodyState %d B", unsafe.Sizeof(Socket{}), unsafe.Sizeof(Ctx{}),
		unsafe.Sizeof(wire.Request{}), unsafe.Sizeof(bodyState{}))
}

// TestTimerOwnersFirst: each owner of a timer has it as its first field, at offset 0, so that
// runTimer's alias.Outer finds the owner from its timer.
func TestTimerOwnersFirst(t *testing.T) {
	for name, off := range map[string]uintptr{
		"Socket.Timer": unsafe.Offsetof(Socket{}.Timer), "Ctx.tm": unsafe.Offsetof(Ctx{}.tm), "Timer.t": unsafe.Offsetof(Timer{}.t),
		"Carrier.Timer": unsafe.Offsetof(Carrier{}.Timer),
	} {
		if off != 0 {
			t.Errorf("%s is at offset %d, not first", name, off)
		}
	}
}
