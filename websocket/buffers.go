package websocket

import "github.com/dwellhttp/dwell/internal/bufpool"

// Message buffers, from dwell's shared pool (bufpool.Get, Put): a message that does not arrive
// whole in one read is gathered in a buffer, a message compressed or inflated is written into
// one, and each goes back to the pool once its message is delivered or sent. Between messages a
// connection holds none. In builds with the race detector a buffer given back is poisoned,
// never reused, so that a message kept past the call that lent it (Events.Message's data) shows.

// appendBuf appends p to a message buffer, moving it to a larger class when it is full. It
// returns a buffer even for an empty p, so that a message under way is never nil.
func appendBuf(b, p []byte) []byte {
	if b == nil {
		b = bufpool.Get(len(p))
	} else if len(b)+len(p) > cap(b) {
		nb := bufpool.Get(max(len(b)+len(p), 2*cap(b)))
		nb = append(nb, b...)
		bufpool.Put(b)
		b = nb
	}
	return append(b, p...)
}
