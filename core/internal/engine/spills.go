package engine

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
