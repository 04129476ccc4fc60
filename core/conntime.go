package core

import (
	"github.com/dwellhttp/dwell/core/internal/netpoll"
	"github.com/dwellhttp/dwell/core/internal/wire"
)

// A connection's deadlines, and the waits of a handler on its socket.

// waitWritable parks the handler cx until the socket takes more output, for a write that goes
// on from the handler's own buffer (see Ctx.send). The write timeout watches the wait.
func (c *conn) waitWritable(cx *Ctx) error {
	c.setInterest(c.events | netpoll.WatchWrite)
	c.armWriteDeadline()
	return cx.parkOnConn(parkWrite)
}

// waitReadable parks the handler cx until body bytes arrive, with the progress-based body
// timeout.
func (c *conn) waitReadable(cx *Ctx) error {
	c.setInterest(c.events | netpoll.WatchRead | netpoll.WatchHangup)
	return c.awaitInput(cx)
}

// onDeadline runs when the connection's timer is due: it acts on whichever deadline has passed.
func (c *conn) onDeadline(l *Loop) {
	switch c.due(l.now) {
	case dueWrite:
		c.writeTimedOut(c)
		return
	case dueRead:
		switch c.state {
		case stHead:
			c.reject(wire.ErrHeaderTimeout)
			c.settle()
		case stHandler:
			c.readTimedOut()
		case stHandedOver:
			hc := c.handed()
			hc.callProtocol(func() { hc.p.Timeout(hc) })
		default:
			c.close(nil)
		}
	}
	if c.state != stClosed {
		c.rearm()
	}
}
