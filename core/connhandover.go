package core

import (
	"github.com/dwellhttp/dwell/core/internal/engine"
	"github.com/dwellhttp/dwell/core/internal/wire"
)

// The connection's side of a hand-over (handover.go): the 101 that switches protocols, and the
// bytes given to the Protocol as they arrive.

// handOver hands the connection over to p, after its 101 response when the status is 101, or
// after nothing (a raw takeover); see Ctx.HandOver.
func (c *conn) handOver(cx *Ctx, p Protocol) (*Conn, error) {
	switch {
	case !cx.body.complete():
		return nil, errHandOverBody
	case cx.resp&rfCommitted != 0 || cx.written != 0:
		return nil, errHandOverResponse
	case cx.status != 0 && cx.status != 101:
		return nil, errHandOverResponse
	}
	if cx.status == 101 {
		c.writeSwitch(cx)
	}
	cx.resp |= rfFinished
	cx.dropResponseFields()
	return c.handOverTo(p, cx.gone == 0), nil
}

// handOverTo makes p the owner of c's bytes. With deliver, the bytes behind the head (and those
// read later in this turn) go to p once the turn is over: p's methods run outside any request.
func (c *conn) handOverTo(p Protocol, deliver bool) *Conn {
	hc := &Conn{ex: c, p: p, serial: c.serial}
	l := c.l
	for int(c.fd) >= len(l.handed) {
		l.handed = engine.AppendDoubling(l.handed, nil)
	}
	l.handed[c.fd] = hc
	c.state = stHandedOver
	c.rdl, c.drainLeft = 0, 0
	if deliver {
		l.pending = append(l.pending, c)
	}
	return hc
}

// writeSwitch queues the 101 response of a protocol switch: the status line, Date, the
// handler's fields (Upgrade among them) and Connection: Upgrade, which RFC 9110 §7.8 requires
// of a 101 and which, like every Connection value, is the server's to write; nothing else (RFC
// 9110 §15.2.2: the switch happens right after its empty line).
func (c *conn) writeSwitch(cx *Ctx) {
	pool := &cx.l.pool
	fields := cx.fieldBytes()
	b := c.out.Spare(pool, 128+len(fields))
	b = wire.AppendStatusLine(b, 101)
	if cx.resp&rfHasDate == 0 {
		b = append(b, "Date: "...)
		b = append(b, cx.l.date[:]...)
		b = append(b, crlf...)
	}
	b = append(b, fields...)
	b = append(b, "Connection: Upgrade\r\n\r\n"...)
	c.out.Filled(pool, b)
	cx.resp |= rfCommitted
}

// handed returns the Conn a handed-over c belongs to: the loop keeps a connection's by its
// descriptor.
func (c *conn) handed() *Conn { return c.l.handed[c.fd] }

// isHanded reports whether c has been handed over and is not closed yet (it may be closing).
func (c *conn) isHanded() bool {
	l := c.l
	return int(c.fd) < len(l.handed) && l.handed[c.fd] != nil && l.handed[c.fd].serial == c.serial
}

// deliver gives the protocol of a handed-over c the input it holds.
func (c *conn) deliver() {
	hc := c.handed()
	if len(c.in) == 0 || hc.is(hcPaused) {
		return
	}
	used := 0
	hc.callProtocol(func() { used = hc.p.Receive(hc, c.in) })
	if c.state == stClosed {
		return
	}
	used = min(max(used, 0), len(c.in))
	c.in = c.in[used:]
	if used == 0 && len(c.in) >= len(c.l.buf) {
		c.close(ErrInputFull)
	}
}

// readHandedOver reads what the socket has for a handed-over connection, behind what its
// protocol left, and gives it all to the protocol.
func (c *conn) readHandedOver() {
	l := c.l
	k := copy(l.buf, c.in)
	c.dropSpill()
	c.in = l.buf[:k]
	if k < len(l.buf) {
		n, ok := c.readSocket(l.buf[k:])
		if !ok {
			return
		}
		c.in = l.buf[:k+n]
	}
	c.deliver()
	if c.state == stClosed {
		return
	}
	if c.outputBlocked() {
		c.heldBack = true // see onReadable
	}
	if c.peerEOF {
		c.close(ErrClosed) // the client ended its input: what it sent has been given
		return
	}
	c.settle()
}
