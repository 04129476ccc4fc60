package http2

import (
	"testing"
	"unsafe"
)

// TestStreamTimerFirst: a stream's Carrier, and so its timer, is its first field, at offset 0, so
// that the multiplexer's Deadline finds the stream from its timer.
func TestStreamTimerFirst(t *testing.T) {
	if off := unsafe.Offsetof(h2stream{}.Carrier); off != 0 {
		t.Errorf("a stream's Carrier is at offset %d, not first", off)
	}
}
