package http1

import (
	"io"
	"strconv"

	"github.com/dwellhttp/dwell/core/internal/serve"
	"github.com/dwellhttp/dwell/core/internal/wire"
)

// The requests of a connection, one after another: parse a request's head, run its handler
// (serve's Loop.RunHandler, in a coroutine), end the request (its response completed) and
// decide what follows — the next request, skipping the rest of an unread body, or the close.

// nextRequest starts the request whose head is next in c.In, if it is complete, and runs its
// handler. It reports whether the connection is ready for more (the handler finished at once).
func (c *conn) nextRequest() bool {
	cx := c.startRequest()
	if cx == nil {
		return false
	}
	c.Loop.RunHandler(cx, nil, nil)
	return c.State != serve.StHandler
}

// startRequest parses a request head from c.In and makes it the connection's request, ready
// for its handler. It returns nil when the head is not complete yet, or was refused.
func (c *conn) startRequest() *serve.Ctx {
	l := c.Loop
	if c.Scan.Fresh() {
		in, more := wire.SkipEmptyLines(c.In)
		if c.State == serve.StIdle && len(c.In) > 0 {
			// The first byte of a request starts its header timeout.
			c.State = serve.StHead
			c.SetReadDeadline(l.Opts.HeaderTimeout)
		}
		c.In = in
		if len(in) == 0 || more {
			return nil
		}
		if !c.Spoke && l.Multiplexer() != nil && l.Multiplexer().Chooses(&c.Socket, in) {
			return nil
		}
	}
	n, status := c.Scan.Scan(c.In, l.Opts.MaxHeaderBytes)
	switch {
	case status == 400:
		c.reject(wire.ErrRequestLine)
		return nil
	case status == 414:
		c.reject(wire.LineTooLong(c.In, l.Opts.MaxHeaderBytes))
		return nil
	case status != 0:
		c.reject(wire.ErrHeadTooLarge)
		return nil
	case n == wire.ScanMore:
		return nil
	}
	head := c.In[:n]
	c.In = c.In[n:]
	c.Scan.Reset()
	cx := l.GetCtx(c, &c.Carrier, c.Via)
	r := &cx.Req
	r.Arena = head // parsed in place; the spans are offsets into head
	fields := l.Fields[:0]
	rej := wire.ParseHead(r, &fields, l.Opts.AllowCONNECT)
	l.Fields = fields[:0]
	if rej != nil {
		r.Arena = nil
		l.PutCtx(cx)
		c.reject(rej)
		return nil
	}
	c.Spoke = true
	if serve.CountStats {
		l.Ctr.Requests++
	}
	cx.Body.Begin(l, r)
	// Copy the head out of the loop buffer, so that nothing pins it.
	r.Adopt(&l.Pool.Pool, head, fields, r.ScratchNeeded())
	r.DecodePath()
	c.KeepAlive = !r.Has(wire.Close) && (r.Minor == 1 || r.Has(wire.KeepAlive)) && !l.Shutting
	c.State = serve.StHandler
	c.ReadDeadline = 0
	c.Ctx = cx
	cx.Begin()
	l.TurnLeft--
	return cx
}

// GoOn lets the connection go on once its request is over, and settles its turn.
func (c *conn) GoOn() {
	if c.State != serve.StHandler && c.State != serve.StClosed {
		c.serve()
	}
	c.Settle()
}

// EndRequest ends the connection's request once its handler (or continuation) has finished:
// the response is completed, the completion hooks run, the Ctx goes back to the loop, and the
// connection goes on — to its next request, to skipping the rest of an unread body, or to the
// close. It is the one place where that is decided: the Ctx reports what happened (RfClose,
// RfAbort, its body's state), and whether the connection can be kept is settled before the
// response head goes out, so that the head says so.
func (c *conn) EndRequest() {
	cx := c.Ctx
	if c.IsHanded() {
		// The connection is a Protocol's: the request's end concerns the request alone.
		cx.RunDone()
		cx.Recycle()
		c.freeCtx()
		return
	}
	b := &cx.Body
	if !b.Complete() && b.Failed == 0 && len(c.In) > 0 {
		// Skip the part of the unread body that has already arrived.
		_, used, err := b.Decode(nil, c.In)
		c.In = c.In[used:]
		if err != nil && err != io.EOF {
			cx.FailBody(err) // broken framing: the connection cannot go on
		}
	}
	// The rest of an unread body is skipped after the response unless it is too long, or the
	// client still waits for its 100 Continue: then the connection closes.
	if b.Failed != 0 || !b.Complete() && (b.Waiting100 || b.Kind == serve.BodyLength && b.Remaining > serve.DrainMax) {
		cx.Resp |= serve.RfClose
	}
	cx.CompleteResponse()
	c.KeepAlive = !c.closesAfter(cx) && cx.Resp&serve.RfAbort == 0
	// Only a reset tells a body delimited by the close that it is cut.
	if cx.Resp&(serve.RfAbort|serve.RfCloseDelimited) == serve.RfAbort|serve.RfCloseDelimited {
		c.Ending = serve.CloseReset
	}
	cx.Resp |= serve.RfFinished // what a completion hook writes would follow the response on the wire
	cx.RunDone()
	cx.Recycle()
	switch {
	case c.State == serve.StClosed:
		c.freeCtx()
	case !c.KeepAlive:
		// Unread body (or a client still waiting for its 100 Continue): drain on close.
		linger := !b.Complete()
		c.freeCtx()
		c.CloseAfterOutput(linger)
	case b.Complete():
		c.awaitNext()
	default:
		c.State = serve.StDrain
		c.DrainLeft = serve.DrainMax
		c.SetReadDeadline(c.Loop.Opts.BodyTimeout)
	}
}

// closesAfter reports whether the connection closes after cx's response: it was not to be kept
// (HTTP/1.0 without keep-alive, a Connection: close from the client, a shutdown), or the
// response asks for it.
func (c *conn) closesAfter(cx *serve.Ctx) bool {
	return !c.KeepAlive || cx.Resp&serve.RfClose != 0 || c.Loop.Shutting
}

// freeCtx gives the request's Ctx back to the loop.
func (c *conn) freeCtx() { c.DropCtx() }

// StartNext starts the connection's next request, if its head is complete in the input and the
// connection may take it now (see serve).
func (c *conn) StartNext() *serve.Ctx {
	if c.State != serve.StIdle || c.Loop.TurnLeft <= 0 || c.OutputBlocked() {
		return nil
	}
	return c.startRequest()
}

// awaitNext readies the connection for its next request.
func (c *conn) awaitNext() {
	c.freeCtx()
	c.State = serve.StIdle
	c.SetReadDeadline(c.Loop.Opts.IdleTimeout)
}

// drain discards the unread rest of a finished request's body from c.In. It reports whether the
// connection is ready for the next request.
func (c *conn) drain() bool {
	if len(c.In) == 0 {
		return false
	}
	cx := c.Ctx
	_, used, err := cx.Body.Decode(nil, c.In)
	c.In = c.In[used:]
	c.DrainLeft -= int32(used)
	switch {
	case cx.Body.Complete():
		c.awaitNext()
		return true
	case err != nil, c.DrainLeft <= 0:
		c.freeCtx()
		c.CloseAfterOutput(true)
	}
	return false
}

// reject answers a request refused before its handler, then closes.
func (c *conn) reject(rej *wire.Reject) {
	l := c.Loop
	if l.DebugEnabled() {
		l.Log.Debug("dwell: request refused", "status", rej.Status, "reason", rej.Reason, "remote", c.RemoteAddr())
	}
	l.Refused(rej.Status)
	if !c.Spoke && rej == wire.ErrNotHTTP && l.Multiplexer() != nil && l.Multiplexer().MayBeDamagedPreface(&c.Socket) {
		c.Close(serve.ErrClosed)
		return
	}
	if l.Opts.WriteRefusal == nil || !l.ShapeReject(&c.Socket, rej) {
		writeReject(&c.Socket, rej)
	}
	c.In = c.In[:0]
	c.KeepAlive = false
	c.CloseAfterOutput(true)
}

// writeReject queues the response to a request refused before its handler.
func writeReject(c *serve.Socket, rej *wire.Reject) {
	l := c.Loop
	pool := &l.Pool
	text := serve.StatusText(rej.Status)
	b := c.Out.Spare(pool, 200+len(rej.Reason)+len(text))
	b = wire.AppendStatusLine(b, rej.Status)
	b = append(b, "Date: "...)
	b = append(b, l.Clk.Date[:]...)
	b = append(b, "\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\nContent-Length: "...)
	b = strconv.AppendInt(b, int64(len(text)+len(rej.Reason)+7), 10)
	b = append(b, "\r\n\r\n"...)
	b = strconv.AppendInt(b, int64(rej.Status), 10)
	b = append(b, ' ')
	b = append(b, text...)
	b = append(b, ": "...)
	b = append(b, rej.Reason...)
	b = append(b, '\n')
	c.Out.Filled(pool, b)
}
