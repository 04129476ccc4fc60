package websocket

import "github.com/dwellhttp/dwell/internal/bufpool"

// Message buffers: a message that does not arrive whole in one read is gathered in a buffer, a
// message compressed or inflated is written into one, and each goes back to dwell's shared
// buffer pool once its message is delivered or sent. Between messages a connection holds none.
// In builds with the race detector a buffer given back is poisoned, never reused, so that a
// message kept past the call that lent it (Events.Message's data) shows.

// getBuf returns an empty buffer of capacity at least n.
func getBuf(n int) []byte { return bufpool.Get(n) }

// bufCap returns the capacity of the buffer getBuf(n) returns.
func bufCap(n int) int { return bufpool.Cap(n) }

// putBuf gives b back; it must not be used again.
func putBuf(b []byte) { bufpool.Put(b) }

// appendBuf appends p to a message buffer, moving it to a larger class when it is full. It
// returns a buffer even for an empty p, so that a message under way is never nil.
func appendBuf(b, p []byte) []byte {
	if b == nil {
		b = getBuf(len(p))
	} else if len(b)+len(p) > cap(b) {
		nb := getBuf(max(len(b)+len(p), 2*cap(b)))
		nb = append(nb, b...)
		putBuf(b)
		b = nb
	}
	return append(b, p...)
}
