package serve

import (
	"crypto/tls"
	"errors"

	"github.com/dwellhttp/dwell/core/internal/engine"
)

// What every exchange of a Socket shares, whoever frames it (HTTP/1.1's conn, package http1,
// is the Exchange): its Carrier and its TLS state; and the hand-over that ends HTTP on it, the
// bytes given to the Protocol as they arrive (handover.go).

func (c *Socket) Base() *Carrier { return &c.Carrier }

func (c *Socket) TLSState() *tls.ConnectionState { return c.Transport().State(int(c.FD), c) }

// The body.

// ErrReadAgain: ReadBody parked and was woken by new bytes; read again.
var ErrReadAgain = errors.New("dwell: read again")

// The response.

// Waits and deadlines.

// The hand-over: the 101 that switches protocols, and the bytes given to the Protocol as they
// arrive (handover.go).

// HandOverTo makes p the owner of c's bytes. With deliver, the bytes behind the head (and those
// read later in this turn) go to p once the turn is over: p's methods run outside any request.
func (c *Socket) HandOverTo(p any, deliver bool) *Conn {
	l := c.Loop
	hc := &Conn{Exchange: l.first.Exchange(c), Proto: p, Serial: c.Serial}
	for int(c.FD) >= len(l.handed) {
		l.handed = engine.AppendDoubling(l.handed, nil)
	}
	l.handed[c.FD] = hc
	c.State = StHandedOver
	c.ReadDeadline, c.DrainLeft = 0, 0
	if deliver {
		l.Pending = append(l.Pending, hc.Exchange)
	}
	return hc
}

// Handed returns the Conn a handed-over c belongs to: the loop keeps a connection's by its
// descriptor.
func (c *Socket) Handed() *Conn { return c.Loop.handed[c.FD] }

// IsHanded reports whether c has been handed over and is not closed yet (it may be closing).
func (c *Socket) IsHanded() bool {
	l := c.Loop
	return int(c.FD) < len(l.handed) && l.handed[c.FD] != nil && l.handed[c.FD].Serial == c.Serial
}

// Deliver gives the protocol of a handed-over c the input it holds.
func (c *Socket) Deliver() {
	hc := c.Handed()
	if len(c.In) == 0 || hc.Is(HcPaused) {
		return
	}
	used := 0
	hc.CallProtocol(func() { used = hc.ProtocolReceive(c.In) })
	if c.State == StClosed {
		return
	}
	used = min(max(used, 0), len(c.In))
	c.In = c.In[used:]
	if used == 0 && len(c.In) >= len(c.Loop.Buf) {
		c.Close(ErrInputFull)
	}
}

// readHandedOver reads what the socket has for a handed-over connection, behind what its
// protocol left, and gives it all to the protocol.
func (c *Socket) readHandedOver() {
	l := c.Loop
	k := copy(l.Buf, c.In)
	c.DropSpill()
	c.In = l.Buf[:k]
	if k < len(l.Buf) {
		n, ok := c.ReadSocket(l.Buf[k:])
		if !ok {
			return
		}
		c.In = l.Buf[:k+n]
	}
	c.Deliver()
	if c.State == StClosed {
		return
	}
	if c.OutputBlocked() {
		c.HeldBack = true // see onReadable
	}
	if c.PeerEOF {
		c.Close(ErrClosed) // the client ended its input: what it sent has been given
		return
	}
	c.Settle()
}
