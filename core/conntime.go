package core

import (
	"time"

	"github.com/dwellhttp/dwell/core/internal/netpoll"
	"github.com/dwellhttp/dwell/core/internal/wire"
)

// A connection's deadlines, and the waits of a handler on its socket.

// setReadDeadline sets the read-side deadline d from now (none when d is 0).
func (c *conn) setReadDeadline(d time.Duration) {
	if d <= 0 {
		c.rdl = 0
		return
	}
	c.rdl = c.l.now + int64(d)
	c.armTimer(c.rdl)
}

// armWriteDeadline starts the write timeout, unless it is already counting: it runs while
// output waits for the client (queued, or a handler parked on its own buffer).
func (c *conn) armWriteDeadline() {
	if c.wdl == 0 && c.l.opts.WriteTimeout > 0 {
		c.wdl = c.l.now + int64(c.l.opts.WriteTimeout)
		c.armTimer(c.wdl)
	}
}

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
	if t := c.l.opts.BodyTimeout; t > 0 {
		c.setReadDeadline(t)
	}
	c.setInterest(c.events | netpoll.WatchRead | netpoll.WatchHangup)
	err := cx.parkOnConn(parkRead)
	c.rdl = 0
	return err
}

// armTimer makes sure the connection's timer fires no later than when. A timer already due
// earlier is left alone and re-armed when it fires (onDeadline): moving a deadline later, as every
// keep-alive request does, costs no heap operation.
func (c *conn) armTimer(when int64) {
	if !c.tm.Armed() || c.tm.When() > when {
		c.l.timers.Set(&c.tm, when)
	}
}

// onDeadline runs when the connection's timer is due: it acts on whichever deadline has passed.
func (c *conn) onDeadline(l *Loop) {
	now := l.now
	if c.wdl != 0 && c.wdl <= now {
		if l.debugEnabled() {
			l.log.Debug("dwell: write timeout", "remote", c.remoteAddr())
		}
		c.close(ErrTimeout)
		return
	}
	if c.rdl != 0 && c.rdl <= now {
		c.rdl = 0
		switch c.state {
		case stHead:
			c.reject(wire.ErrHeaderTimeout)
			c.settle()
		case stHandler:
			if c.cx.parkedOn(parkRead) || c.cx.parkedOn(parkBody) {
				c.cx.wake(ErrTimeout)
			}
		case stHandedOver:
			hc := c.handed()
			hc.callProtocol(func() { hc.p.Timeout(hc) })
		default:
			c.close(nil)
		}
		if c.state == stClosed {
			return
		}
	}
	next := c.rdl
	if c.wdl != 0 && (next == 0 || c.wdl < next) {
		next = c.wdl
	}
	if next != 0 {
		l.timers.Set(&c.tm, next)
	}
}
