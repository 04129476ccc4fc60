package middleware

import (
	"encoding/binary"
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// TestNewRequestIDIsAUUID: the id newRequestID returns is a version 4 UUID, and its interface
// holds the same string.
func TestNewRequestIDIsAUUID(t *testing.T) {
	id, v := newRequestID()
	if v.(string) != id || len(id) != 36 {
		t.Fatalf("id %q, interface %q", id, v)
	}
	for i, ch := range id {
		switch {
		case i == 8 || i == 13 || i == 18 || i == 23:
			if ch != '-' {
				t.Fatalf("id %q: %q at %d", id, ch, i)
			}
		case i == 14 && ch != '4', i == 19 && !(ch == '8' || ch == '9' || ch == 'a' || ch == 'b'):
			t.Fatalf("id %q: not a version 4 RFC 9562 UUID", id)
		case !('0' <= ch && ch <= '9' || 'a' <= ch && ch <= 'f'):
			t.Fatalf("id %q: %q at %d", id, ch, i)
		}
	}
}

// TestNewRequestIDsOutliveTheirBlock: the ids of several blocks are all different, each its
// interface's string, and unchanged after the blocks are used up, nothing but the ids holds
// them, and a GC has run while more ids were made.
func TestNewRequestIDsOutliveTheirBlock(t *testing.T) {
	const n = 5*idsPerBlock + 3
	ids := make([]string, n)
	vs := make([]any, n)
	copies := make(map[string]bool, n)
	for i := range ids {
		ids[i], vs[i] = newRequestID()
		copies[strings.Clone(ids[i])] = true
	}
	if len(copies) != n {
		t.Fatalf("%d different ids among %d", len(copies), n)
	}
	runtime.GC()
	for range 10 * idsPerBlock {
		newRequestID()
	}
	for i, id := range ids {
		if !copies[id] || vs[i].(string) != id {
			t.Fatalf("id %d is now %q, its interface %q", i, id, vs[i])
		}
	}
}

// TestHexDigits: hexDigits writes what fmt's %08x does.
func TestHexDigits(t *testing.T) {
	for _, x := range []uint32{0, 1, 9, 10, 15, 16, 0x12345678, 0x9abcdef0, 0xffffffff, 0xa0b0c0d0} {
		var b [8]byte
		binary.BigEndian.PutUint64(b[:], hexDigits(x))
		if want := fmt.Sprintf("%08x", x); string(b[:]) != want {
			t.Errorf("hexDigits(%#x) = %q, want %q", x, b, want)
		}
	}
}
