package engine

import (
	"testing"
	"unsafe"

	"github.com/dwellhttp/dwell/internal/alias"
)

// TestSpills: handles are never 0, a released handle's slot serves the next buffer, and each
// handle stands for its own buffer until it is released.
func TestSpills(t *testing.T) {
	var s Spills
	var pool OutPool
	a, b := s.Hold(pool.Get(10)), s.Hold(pool.Get(20))
	if a == 0 || b == 0 || a == b {
		t.Fatalf("handles %d and %d", a, b)
	}
	s.Release(a, &pool)
	if c := s.Hold(pool.Get(30)); c != a {
		t.Errorf("a released slot is not reused: %d, freed %d", c, a)
	}
	if cap(s.bufs[b-1]) < 20 || s.bufs[b-1] == nil {
		t.Errorf("handle %d lost its buffer", b)
	}
	if d := s.Hold(pool.Get(40)); d == a || d == b {
		t.Errorf("a held slot is given again: %d", d)
	}
}

// TestConnKeepInput: input left in the loop's read buffer moves to a spill buffer of its own at
// the end of the turn, which keeps it while it is unparsed and goes back to the pool once it is
// all parsed; input already in the spill buffer stays where it is.
func TestConnKeepInput(t *testing.T) {
	l := &Loop{Buf: make([]byte, 64)}
	copy(l.Buf, "GET / HTTP/1.1\r\n")
	var c Conn
	c.In = l.Buf[4:9]
	c.KeepInput(l)
	if string(c.In) != "/ HTT" || c.spill == 0 || alias.Within(c.In, l.Buf) {
		t.Fatalf("kept %q (spill %d, in the read buffer: %v)", c.In, c.spill, alias.Within(c.In, l.Buf))
	}
	copy(l.Buf, "overwritten by the next connection's turn")
	if string(c.In) != "/ HTT" {
		t.Fatalf("the kept input changed with the read buffer: %q", c.In)
	}
	spill := c.spill
	c.In = c.In[2:]
	c.KeepInput(l)
	if string(c.In) != "HTT" || c.spill != spill {
		t.Fatalf("input in its spill buffer moved: %q, spill %d (was %d)", c.In, c.spill, spill)
	}
	c.In = c.In[3:]
	c.KeepInput(l)
	if c.In != nil || c.spill != 0 || len(l.Spills.free) != 1 {
		t.Fatalf("all parsed: input %q, spill %d, free spill slots %d", c.In, c.spill, len(l.Spills.free))
	}
	c.DropSpill(l) // none: nothing to give back
	if len(l.Spills.free) != 1 {
		t.Fatalf("a second drop freed a slot again: %d free", len(l.Spills.free))
	}
}

// TestConnLayout: a Conn leaves no padding for the connection it begins (see Conn).
func TestConnLayout(t *testing.T) {
	if n := unsafe.Sizeof(Conn{}); n != 32 {
		t.Errorf("Conn is %d bytes, not 32", n)
	}
}
