package engine

import "github.com/dwellhttp/dwell/internal/alias"

// A Conn is what the engine keeps of a connection: its descriptor, and its unparsed input — in
// the loop's shared read buffer during a turn, in a spill buffer of its own between turns, so
// that an idle connection holds no buffer. The server's connection holds one right after what it
// shares with an HTTP/2 stream (its fields are laid out to leave no padding: In, then two
// int32s).
type Conn struct {
	In    []byte // unparsed input: in the loop buffer during a turn, in a spill buffer between turns
	FD    int32
	spill int32 // the spill buffer holding In: its handle in the loop's Spills; 0 when none
}

// KeepInput ends c's turn on l for its input: what is left unparsed in l's read buffer, which
// the next connection's turn will overwrite, moves into a spill buffer sized for it; with
// nothing left, a spill buffer goes back to the pool.
func (c *Conn) KeepInput(l *Loop) {
	switch {
	case len(c.In) == 0:
		c.DropSpill(l)
		c.In = nil
	case alias.Within(c.In, l.Buf):
		c.DropSpill(l)
		b := append(l.Pool.Get(len(c.In)), c.In...)
		c.spill = l.Spills.Hold(b)
		c.In = b
	}
}

// DropSpill gives c's spill buffer back to l's pool, if it holds one; In, if it was there, is
// no longer c's to read.
func (c *Conn) DropSpill(l *Loop) {
	if c.spill != 0 {
		l.Spills.Release(c.spill, &l.Pool)
		c.spill = 0
	}
}

// Spills are a loop's spill buffers: what a connection keeps of its unparsed input between
// turns, once the loop's shared read buffer is the next connection's, in a buffer from the
// pool sized for it. The loop holds them, so that a connection keeps a 4-byte handle (1 + the
// buffer's index; 0 for none) where a slice would take 24 bytes of every connection, idle ones
// included.
type Spills struct {
	bufs [][]byte
	free []int32 // indexes of bufs not in use
}

// Hold keeps b, a buffer of pool's, and returns its handle.
func (s *Spills) Hold(b []byte) int32 {
	if n := len(s.free); n > 0 {
		i := s.free[n-1]
		s.free = s.free[:n-1]
		s.bufs[i] = b
		return i + 1
	}
	s.bufs = append(s.bufs, b)
	return int32(len(s.bufs))
}

// Release gives the buffer of handle h back to pool.
func (s *Spills) Release(h int32, pool *OutPool) {
	i := h - 1
	pool.Put(s.bufs[i])
	s.bufs[i] = nil
	s.free = append(s.free, i)
}
