package http1

import (
	"testing"
	"unsafe"

	"github.com/dwellhttp/dwell/core/internal/serve"
)

// TestConnIsItsSocket: a conn is its Socket and nothing more, at offset 0, so that h1 (and the
// Socket's timer, whose owner is found from it) reach the one from the other, and the Socket's
// timer is still a conn's first field.
func TestConnIsItsSocket(t *testing.T) {
	if off := unsafe.Offsetof(conn{}.Socket); off != 0 {
		t.Errorf("conn.Socket is at offset %d, not first", off)
	}
	if a, b := unsafe.Sizeof(conn{}), unsafe.Sizeof(serve.Socket{}); a != b {
		t.Errorf("conn is %d bytes, its Socket %d: a conn must be its Socket alone", a, b)
	}
	var s serve.Socket
	if c := h1(&s); &c.Socket != &s {
		t.Error("h1 does not find the Socket's conn at the Socket's address")
	}
}
