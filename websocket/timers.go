package websocket

import (
	"errors"
	"time"

	"github.com/dwellhttp/dwell/websocket/internal/frame"
)

// A connection's timers are one deadline, the handed-over connection's own (core.Conn's
// SetTimeout, a node in the loop's timer heap that every connection has already), set to the
// nearest of what the connection waits for: the next ping, the pong of the last one, the
// client's close frame after this side's, the idle timeout and the end of a message in
// progress. timerAt is the first three's — which one the state says — lastIn the idle
// timeout's start and msgSince the message's. A deadline that moves later (a message that
// ended) is left to fire at the earlier time, which finds nothing due and sets the next.

func now() int64 { return time.Now().UnixNano() }

// processStart is what Conn.msgSince counts from.
var processStart = now()

// sinceStart returns the time now as msgSince holds it: whole seconds since processStart, plus
// one.
func sinceStart() int32 { return int32((now()-processStart)/int64(time.Second)) + 1 }

// messageDeadline is when the message in progress must have ended: up to a second early, as
// msgSince is in whole seconds.
func (c *Conn) messageDeadline() int64 {
	return processStart + int64(c.msgSince-1)*int64(time.Second) + int64(c.o.messageTimeout())
}

// startTimers sets the first deadline of a new connection.
func (c *Conn) startTimers() {
	t := now()
	if d := c.o.pingInterval(); d > 0 {
		c.timerAt = t + int64(d)
	}
	if c.o.idleTimeout() > 0 {
		c.lastIn = t
	}
	c.schedule()
}

// schedule sets the connection's deadline to the nearest of what it waits for.
func (c *Conn) schedule() {
	if c.state >= stateDone {
		return
	}
	next := c.timerAt
	if idle := c.o.idleTimeout(); idle > 0 && c.state == stateOpen {
		if at := c.lastIn + int64(idle); next == 0 || at < next {
			next = at
		}
	}
	if c.msgSince != 0 {
		if at := c.messageDeadline(); next == 0 || at < next {
			next = at
		}
	}
	if next == 0 {
		c.hc.SetTimeout(0)
		return
	}
	c.hc.SetTimeout(time.Duration(max(next-now(), 1)))
}

// timeout is the core.Protocol's Timeout: the deadline has passed.
func (c *Conn) timeout() {
	t := now()
	switch {
	case c.state == stateClosing:
		c.end(errCloseTimeout) // the client did not answer the close frame: the TCP connection closes anyway
		return
	case c.msgSince != 0 && t >= c.messageDeadline():
		c.fail(ClosePolicyViolation, "message not finished in time")
		return
	case c.o.idleTimeout() > 0 && t >= c.lastIn+int64(c.o.idleTimeout()):
		c.startClose(CloseGoingAway, "idle")
		return
	case c.awaitPong && t >= c.timerAt:
		if !c.ready || c.pongGrace {
			c.end(ErrPongTimeout)
			return
		}
		// The pong may be waiting behind a message the handler, busy, has not read yet,
		// unread itself: the client is not the one late. It gets one more pong timeout, no
		// more, so that a message nobody reads (the handler has returned) holds the
		// connection no longer than twice that.
		c.pongGrace = true
		c.timerAt = t + int64(c.o.pongTimeout())
	case !c.awaitPong && c.timerAt != 0 && t >= c.timerAt:
		c.writeFrame(frame.Ping, nil, true, false)
		c.awaitPong = true
		c.timerAt = t + int64(c.o.pongTimeout())
	}
	c.schedule()
}

// ponged takes the answer to the last ping: the next one is due an interval from now.
func (c *Conn) ponged() {
	if !c.awaitPong || c.state != stateOpen {
		return
	}
	c.awaitPong, c.pongGrace = false, false
	c.timerAt = now() + int64(c.o.pingInterval())
	c.schedule()
}

// end closes the TCP connection without (more of) a close handshake, err saying why when no
// close frame did. The request that upgraded is told why when the end is not the normal one
// (core.Conn.SetErr), for its Done.Err: an access log then marks a connection failed or timed
// out, and not one whose close handshake the client completed. A client that answered neither
// the close frame nor a ping in time, with output still queued for it, is not reading: its
// connection is dropped at once, as dropSlow drops one, rather than held until that output
// goes out (a reset would lose what it has not read yet, so with nothing queued it closes as
// usual).
func (c *Conn) end(err error) {
	if err != nil {
		c.setErr(err)
	}
	if why := c.abnormal(err); why != nil {
		c.hc.SetErr(why)
	}
	c.setState(stateDone)
	if (err == errCloseTimeout || err == ErrPongTimeout) && c.hc.Buffered() > 0 {
		c.hc.Abort()
		return
	}
	c.hc.Close()
}

// errCloseTimeout is why a connection whose client did not answer this side's close frame
// within Options.CloseTimeout ended, for the request that upgraded (the connection's own error
// stays the close frame's, a *CloseError).
var errCloseTimeout = errors.New("websocket: the client did not answer the close frame")

// abnormal returns why the connection ends, err or the close frame it failed with, unless
// the end is a close handshake that the client completed — its close frame answered (RFC 6455
// §5.5.1), or this side's answered by the client's — which is the normal end, whatever the
// codes said (RFC 6455 §7.1.4: the connection is closed cleanly). end's callers tell the two
// apart so: control ends a handshake with a nil err, a *CloseError from the client or this
// side's close under way (stateClosing); fail, with a nil err, a close frame of this side's
// sent as the connection failed (stateOpen); the timers give err. (A connection failed after
// this side's close frame went out passes for a completed handshake.)
func (c *Conn) abnormal(err error) error {
	if err != nil {
		return err
	}
	ce, ok := c.closeErr().(*CloseError)
	if !ok || ce.Remote || c.state == stateClosing {
		return nil
	}
	return ce
}
