package core

import (
	"io"

	"github.com/dwellhttp/dwell/core/internal/netpoll"
	"github.com/dwellhttp/dwell/core/internal/wire"
)

// The requests of a connection, one after another: parse, run the handler, finish the response,
// then the next — or the close.

// nextRequest starts the request whose head is next in c.in, if it is complete, and runs its
// handler. It reports whether the connection is ready for more (the handler finished at once).
func (c *conn) nextRequest() bool {
	cx := c.startRequest()
	if cx == nil {
		return false
	}
	c.run(cx, nil, nil)
	return c.state != stHandler
}

// startRequest parses a request head from c.in and makes it the connection's request, ready
// for its handler. It returns nil when the head is not complete yet, or was refused.
func (c *conn) startRequest() *Ctx {
	l := c.l
	if c.scan.Fresh() {
		in, more := wire.SkipEmptyLines(c.in)
		if c.state == stIdle && len(c.in) > 0 {
			// The first byte of a request starts its header timeout.
			c.state = stHead
			c.setReadDeadline(l.opts.HeaderTimeout)
		}
		c.in = in
		if len(in) == 0 || more {
			return nil
		}
	}
	n, status := c.scan.Scan(c.in, l.opts.MaxHeaderBytes)
	switch {
	case status == 414:
		c.reject(wire.LineTooLong(c.in, l.opts.MaxHeaderBytes))
		return nil
	case status != 0:
		c.reject(wire.ErrHeadTooLarge)
		return nil
	case n == wire.ScanMore:
		return nil
	}
	head := c.in[:n]
	c.in = c.in[n:]
	c.scan.Reset()
	cx := l.getCtx(c)
	r := &cx.req
	r.Arena = head // parsed in place; the spans are offsets into head
	fields := l.fields[:0]
	rej := wire.ParseHead(r, &fields, l.opts.AllowCONNECT)
	l.fields = fields[:0]
	if rej != nil {
		r.Arena = nil
		l.putCtx(cx)
		c.reject(rej)
		return nil
	}
	cx.body.begin(l, r)
	// Copy the head out of the loop buffer, so that nothing pins it.
	r.Adopt(&l.pool, head, fields, r.ScratchNeeded())
	r.DecodePath()
	c.keepAlive = !r.Has(wire.Close) && (r.Minor == 1 || r.Has(wire.KeepAlive)) && !l.shutting
	c.state = stHandler
	c.rdl = 0
	c.cx = cx
	cx.begin()
	l.turnLeft--
	return cx
}

// run runs the request's handler (or, with k, its continuation) until it returns or parks,
// and when it returns, goes on with the request: it waits for its continuation, or it is done.
func (c *conn) run(cx *Ctx, k func(*Ctx, error), err error) {
	cx, returned := c.l.switchTo(cx, k, err)
	if !returned || cx == nil {
		return // parked, or finished in the coroutine (see Loop.chain)
	}
	if cx.detachK != nil {
		cx.state = ctxDetached
		cx.freeRequest() // the request's values end when the handler returns
		if cx.gone != 0 {
			cx.wake(cx.gone.err())
		} else if c.l.shutting {
			cx.wakeForShutdown()
		}
		return
	}
	c.endRequest()
}

// resume runs a woken handler or continuation, then lets its connection go on.
func (c *conn) resume(cx *Ctx) {
	c.l.turnLeft = maxPipelined
	switch cx.state {
	case ctxReady:
		c.run(cx, nil, nil)
	case ctxDetachedReady:
		k := cx.detachK
		cx.detachK = nil
		c.run(cx, k, cx.endPark())
	default:
		return
	}
	if c.state != stHandler { // the request is over: go on with the connection
		c.serve()
	}
	c.settle()
}

// endRequest ends the connection's request once its handler (or continuation) has finished:
// the response is completed, the completion hooks run, the Ctx goes back to the loop, and the
// connection goes on — to its next request, to skipping the rest of an unread body, or to the
// close. It is the one place where that is decided: the Ctx reports what happened (rfClose,
// rfAbort, its body's state), and whether the connection can be kept is settled before the
// response head goes out, so that the head says so.
func (c *conn) endRequest() {
	cx := c.cx
	b := &cx.body
	if !b.complete() && b.failed == 0 && len(c.in) > 0 {
		// Skip the part of the unread body that has already arrived.
		_, used, err := b.decode(nil, c.in)
		c.in = c.in[used:]
		if err != nil && err != io.EOF {
			cx.failBody(err) // broken framing: the connection cannot go on
		}
	}
	// The rest of an unread body is skipped after the response unless it is too long, or the
	// client still waits for its 100 Continue: then the connection closes.
	if b.failed != 0 || !b.complete() && (b.waiting100 || b.kind == bodyLength && b.remaining > drainMax) {
		cx.resp |= rfClose
	}
	cx.completeResponse()
	c.keepAlive = !c.closesAfter(cx) && cx.resp&rfAbort == 0
	c.reset = cx.resp&(rfAbort|rfCloseDelimited) == rfAbort|rfCloseDelimited // only a reset tells such a body is cut
	cx.resp |= rfFinished                                                    // what a completion hook writes would follow the response on the wire
	cx.runDone()
	cx.recycle()
	switch {
	case c.state == stClosed:
		c.freeCtx()
	case !c.keepAlive:
		// Unread body (or a client still waiting for its 100 Continue): drain on close.
		linger := !b.complete()
		c.freeCtx()
		c.closeAfterOutput(linger)
	case b.complete():
		c.awaitNext()
	default:
		c.state = stDrain
		c.drainLeft = drainMax
		c.setReadDeadline(c.l.opts.BodyTimeout)
	}
}

// closesAfter reports whether the connection closes after cx's response: it was not to be kept
// (HTTP/1.0 without keep-alive, a Connection: close from the client, a shutdown), or the
// response asks for it.
func (c *conn) closesAfter(cx *Ctx) bool {
	return !c.keepAlive || cx.resp&rfClose != 0 || c.l.shutting
}

// freeCtx gives the request's Ctx back to the loop.
func (c *conn) freeCtx() {
	if cx := c.cx; cx != nil {
		c.cx = nil
		cx.body.end(c.l)
		c.l.putCtx(cx)
	}
}

// awaitNext readies the connection for its next request.
func (c *conn) awaitNext() {
	c.freeCtx()
	c.state = stIdle
	c.setReadDeadline(c.l.opts.IdleTimeout)
}

// drain discards the unread rest of a finished request's body from c.in. It reports whether the
// connection is ready for the next request.
func (c *conn) drain() bool {
	if len(c.in) == 0 {
		return false
	}
	cx := c.cx
	_, used, err := cx.body.decode(nil, c.in)
	c.in = c.in[used:]
	c.drainLeft -= int32(used)
	switch {
	case cx.body.complete():
		c.awaitNext()
		return true
	case err != nil, c.drainLeft <= 0:
		c.freeCtx()
		c.closeAfterOutput(true)
	}
	return false
}

// onPeerEOF handles the client's end of input seen by the loop's own read.
func (c *conn) onPeerEOF() {
	switch c.state {
	case stIdle, stHead, stDrain:
		// Nothing more will come: a partial request or body is abandoned, and a finished
		// exchange ends once its responses are out.
		c.freeCtx()
		c.closeAfterOutput(false)
	}
	c.setInterest(c.events &^ (netpoll.WatchRead | netpoll.WatchHangup))
}

// reject answers a request refused before its handler, then closes.
func (c *conn) reject(rej *wire.Reject) {
	l := c.l
	if l.debugEnabled() {
		l.log.Debug("dwell: request refused", "status", rej.Status, "reason", rej.Reason, "remote", c.remoteAddr())
	}
	writeReject(c, rej)
	c.in = c.in[:0]
	c.keepAlive = false
	c.closeAfterOutput(true)
}

// closeAfterOutput ends the connection once its queued output is written. linger says the
// client may still be sending, so its input is drained before the close (see finishClose).
func (c *conn) closeAfterOutput(linger bool) {
	if c.state == stClosed {
		return
	}
	c.state = stClosing
	c.linger = c.linger || linger
	c.rdl = 0
	if c.out.size == 0 {
		c.finishClose()
	}
}

// finishClose closes a connection whose output is written. Closing a socket that still has
// unread input makes the kernel send a reset, which can destroy the response before the client
// reads it; so when the client may still be sending, shut down our side, discard what arrives
// for a bounded time, and close when the client does.
func (c *conn) finishClose() {
	if c.reset {
		netpoll.ResetOnClose(int(c.fd))
		c.close(nil)
		return
	}
	if !c.linger || c.peerEOF {
		c.close(nil)
		return
	}
	netpoll.ShutdownWrite(int(c.fd))
	c.state = stLinger
	c.setReadDeadline(lingerTimeout)
	c.setInterest(netpoll.WatchRead | netpoll.WatchHangup)
}

func (c *conn) readLinger() {
	for c.state == stLinger {
		n, e := netpoll.Read(int(c.fd), c.l.buf)
		switch {
		case n > 0:
		case e == netpoll.EAGAIN:
			return
		case e == netpoll.EINTR:
		default:
			c.close(nil)
		}
	}
}
