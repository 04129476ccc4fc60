package core

import (
	"io"
	"time"

	"github.com/dwellhttp/dwell/core/internal/netpoll"
	"github.com/dwellhttp/dwell/core/internal/wire"
)

// A conn is one client connection. An idle one holds no buffer and no Ctx: unparsed input lives
// in the loop's shared buffer during a turn and moves to a pooled spill buffer only if some is
// left over; a Ctx comes from the loop's pool when a request head is complete and goes back
// when the request is over; output lives in pooled chunks only until the socket takes it.
type conn struct {
	tm     timer // first: see timer
	fd     int32
	serial uint32
	l      *Loop
	cx     *Ctx // the request being served, or nil

	rdl, wdl int64 // read-side and write-side deadlines on the loop clock; 0 means none

	in    []byte // unparsed input: in the loop buffer during a turn, in a spill buffer between turns
	scan  wire.HeadScan
	out   writeQueue
	spill int32 // the spill buffer holding in: 1 + its index in the loop's spills; 0 when none

	events    netpoll.Interest // what the poller watches the socket for
	state     connState
	keepAlive bool // the current request allows another after it
	peerEOF   bool // the client has shut down its side
	heldBack  bool // requests wait until the client reads its responses (see serve)
	linger    bool // on close, shut down writes and drain input first (see finishClose)
	reset     bool // on close, reset the connection: an aborted response must not look whole
}

type connState uint8

const (
	stIdle    connState = iota // waiting for the first byte of a request
	stHead                     // part of a request head has arrived
	stHandler                  // a handler owns the request (running, parked or detached)
	stDrain                    // the handler is done; discarding the rest of its body
	stClosing                  // no more requests: close once the output is written
	stLinger                   // output written and write side shut; draining input, then close
	stClosed
)

// Bounds on the work done for a request the handler did not finish reading, and on a closing
// connection's lingering, which lets the client read a final response (a 413, say) instead of
// losing it to a reset caused by its own unread upload.
const (
	drainMax      = 256 << 10
	lingerTimeout = 2 * time.Second
)

func (c *conn) onEvent(ev *netpoll.Event) {
	if ev.Failed() {
		// Both directions are shut: the client reset the connection, or it finished closing
		// while we lingered.
		c.close(ErrClosed)
		return
	}
	if ev.Writable() {
		c.flush()
		if c.state == stClosed {
			return
		}
	}
	if ev.Readable() {
		c.onReadable(ev.PeerClosed())
	}
}

func (c *conn) onReadable(hangup bool) {
	switch c.state {
	case stIdle, stHead, stDrain:
		c.readInput()
	case stHandler:
		cx := c.cx
		if cx.parkedOn(parkRead) {
			cx.wake(nil) // the handler reads for itself, straight into its buffer
			return
		}
		// Input the handler does not want yet. The poller is level-triggered, so stop asking
		// about it until the handler reads; a hang-up stays watched unless it is this one.
		ev := c.events &^ netpoll.WatchRead
		if hangup {
			ev &^= netpoll.WatchHangup
			c.peerEOF = true
			if cx.body.complete() {
				cx.clientGone(ErrClosed)
			}
		}
		c.setInterest(ev)
	case stLinger:
		c.readLinger()
	case stClosing:
		if hangup {
			c.peerEOF = true
		}
		c.setInterest(c.events &^ (netpoll.WatchRead | netpoll.WatchHangup))
	}
}

// readInput reads what the socket has into the loop buffer, behind any input held from before,
// and serves the requests it completes.
func (c *conn) readInput() {
	l := c.l
	if c.outputBlocked() {
		c.updateInterest()
		return
	}
	k := copy(l.buf, c.in)
	c.dropSpill()
	if k < len(l.buf) {
		n, e := netpoll.Read(int(c.fd), l.buf[k:])
		switch {
		case n > 0:
			k += n
		case e == 0:
			c.peerEOF = true
		case e == netpoll.EAGAIN || e == netpoll.EINTR:
		default:
			c.close(ErrClosed)
			return
		}
	}
	c.in = l.buf[:k]
	c.serve()
	if c.peerEOF {
		c.onPeerEOF()
	}
	c.settle()
}

// maxPipelined bounds the requests a connection runs in one turn of the loop.
const maxPipelined = 64

// serve runs the requests in c.in until it runs out of input or a handler keeps the
// connection: several pipelined requests are answered in one turn, and their responses leave
// in one write. Two bounds keep one client from taking more than its share: at most
// maxPipelined requests a turn (the rest wait for the next iteration, behind other
// connections), and no new request while the client leaves more than WriteHighWater of
// responses unread (reading resumes once it has taken half).
func (c *conn) serve() {
	for n := 0; ; n++ {
		if c.outputBlocked() {
			c.heldBack = true // afterSend resumes it once the client has read enough
			return
		}
		if n == maxPipelined {
			c.l.pending = append(c.l.pending, c)
			return
		}
		switch c.state {
		case stIdle, stHead:
			if !c.nextRequest() {
				return
			}
		case stDrain:
			if !c.drain() {
				return
			}
		default:
			return
		}
	}
}

// outputBlocked reports whether the client has left so much output unread that the connection
// takes no more requests for now.
func (c *conn) outputBlocked() bool { return c.out.size > int64(c.l.opts.WriteHighWater) }

// nextRequest parses a request head from c.in and starts its handler. It reports whether the
// connection is ready for more (the handler finished at once).
func (c *conn) nextRequest() bool {
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
			return false
		}
	}
	n, status := c.scan.Scan(c.in, l.opts.MaxHeaderBytes)
	switch {
	case status == 414:
		c.reject(wire.LineTooLong(c.in, l.opts.MaxHeaderBytes))
		return false
	case status != 0:
		c.reject(wire.ErrHeadTooLarge)
		return false
	case n == wire.ScanMore:
		return false
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
		return false
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
	c.run(cx, nil, nil)
	return c.state != stHandler
}

// run runs the request's handler (or, with k, its continuation) until it returns or parks,
// and when it returns, goes on with the request: it waits for its continuation, or it is done.
func (c *conn) run(cx *Ctx, k func(*Ctx, error), err error) {
	if !c.l.switchTo(cx, k, err) {
		return // parked
	}
	if cx.detachK != nil {
		cx.state = ctxDetached
		cx.releaseRequest() // the request's values end when the handler returns
		if cx.gone != 0 {
			cx.wake(cx.gone.err())
		} else if c.l.shutting {
			cx.wakeForShutdown()
		}
		return
	}
	c.handlerDone()
}

// resume runs a woken handler or continuation, then lets its connection go on.
func (c *conn) resume(cx *Ctx) {
	switch cx.state {
	case ctxReady:
		c.run(cx, nil, nil)
	case ctxDetachedReady:
		k := cx.detachK
		err := cx.wakeErr()
		cx.detachK = nil
		cx.park = parkNone
		c.l.timers.stop(&cx.tm)
		cx.gen++
		c.run(cx, k, err)
	default:
		return
	}
	if c.state != stHandler { // the request is over: go on with the connection
		c.serve()
	}
	c.settle()
}

// handlerDone is called once a request's handler (or its continuation) has finished: it
// completes the response and decides what the connection does next. Whether the connection
// can be kept is decided before the response head goes out, so that the head says so.
func (c *conn) handlerDone() {
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
	keep := c.keepAlive && b.failed == 0 &&
		(b.complete() || !b.waiting100 && !(b.kind == bodyLength && b.remaining > drainMax))
	if !keep {
		cx.rflags |= rfClose
	}
	cx.finish()
	cx.runDone()
	cx.end()
	switch {
	case c.state == stClosed:
		c.endRequest()
	case !c.keepAlive:
		// Unread body (or a client still waiting for its 100 Continue): drain on close.
		linger := !b.complete()
		c.endRequest()
		c.closeAfterOutput(linger)
	case b.complete():
		c.nextIdle()
	default:
		c.state = stDrain
		cx.drainLeft = drainMax
		c.setReadDeadline(c.l.opts.BodyTimeout)
	}
}

// endRequest gives the request's Ctx back to the loop.
func (c *conn) endRequest() {
	if cx := c.cx; cx != nil {
		c.cx = nil
		cx.body.end(c.l)
		c.l.putCtx(cx)
	}
}

// nextIdle readies the connection for its next request.
func (c *conn) nextIdle() {
	c.endRequest()
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
	cx.drainLeft -= int32(used)
	switch {
	case cx.body.complete():
		c.nextIdle()
		return true
	case err != nil, cx.drainLeft <= 0:
		c.endRequest()
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
		c.endRequest()
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

// settle ends a turn on c: unparsed input moves out of the shared buffer, queued output is
// written, and the poller is told what c waits for now.
func (c *conn) settle() {
	if c.state == stClosed {
		return
	}
	if c.peerEOF && c.state == stIdle && len(c.in) == 0 {
		// The client shut its side and every request it sent is answered: nothing more can
		// come. (Without this, a client that left while its last handler ran would hold the
		// connection until the idle timeout, or until a reset from its host closed it.)
		c.closeAfterOutput(false)
		if c.state == stClosed {
			return
		}
	}
	c.keepInput()
	if c.out.size > 0 {
		c.flush()
		if c.state == stClosed {
			return
		}
	}
	c.updateInterest()
}

// keepInput moves unparsed bytes out of the loop buffer, which the next connection's turn will
// overwrite, into a spill buffer sized for them.
func (c *conn) keepInput() {
	l := c.l
	switch {
	case len(c.in) == 0:
		c.dropSpill()
		c.in = nil
	case l.owns(c.in):
		c.dropSpill()
		b := append(l.pool.Get(len(c.in)), c.in...)
		c.spill = l.holdSpill(b)
		c.in = b
	}
}

func (c *conn) dropSpill() {
	if c.spill != 0 {
		c.l.releaseSpill(c.spill)
		c.spill = 0
	}
}

// flush writes queued output until the socket is full, then waits for it to drain.
func (c *conn) flush() {
	progressed, err := c.out.send(c, nil)
	if err != nil {
		c.close(ErrClosed)
		return
	}
	c.afterSend(progressed)
}

// afterSend updates deadlines, parked writers and closing after bytes were (or were not) written.
func (c *conn) afterSend(progressed bool) {
	l := c.l
	if c.heldBack && c.out.size <= int64(l.opts.WriteHighWater/2) {
		c.heldBack = false
		l.pending = append(l.pending, c)
	}
	cx := c.cx
	writer := cx != nil && cx.parkedOn(parkWrite)
	if c.out.size == 0 {
		c.wdl = 0
		if writer {
			cx.wake(nil)
		}
		if c.state == stClosing {
			c.finishClose()
			return
		}
		c.updateInterest()
		return
	}
	// Progress-based write timeout: it restarts whenever the client takes some bytes.
	if progressed {
		c.wdl = 0
	}
	c.armWriteDeadline()
	if writer && c.out.size <= int64(l.opts.WriteHighWater/2) && !c.out.hasFile() {
		cx.wake(nil)
	}
	c.updateInterest()
}

// updateInterest registers what the connection waits for. Readability is watched while the
// loop wants input; during a handler it is left as it is until input arrives that the handler
// does not want (onReadable), so the steady keep-alive path makes no epoll_ctl call.
func (c *conn) updateInterest() {
	ev := c.events
	switch c.state {
	case stIdle, stHead, stDrain:
		if c.outputBlocked() {
			ev &^= netpoll.WatchRead
		} else {
			ev |= netpoll.WatchRead | netpoll.WatchHangup
		}
	case stLinger:
		ev |= netpoll.WatchRead | netpoll.WatchHangup
	case stHandler:
		if c.cx.parkedOn(parkRead) {
			ev |= netpoll.WatchRead | netpoll.WatchHangup
		}
	}
	if c.peerEOF {
		ev &^= netpoll.WatchRead | netpoll.WatchHangup
	}
	if c.out.size > 0 || c.cx != nil && c.cx.parkedOn(parkWrite) {
		ev |= netpoll.WatchWrite // output to send, or a writer waiting for room to send from its own buffer
	} else {
		ev &^= netpoll.WatchWrite
	}
	c.setInterest(ev)
}

func (c *conn) setInterest(ev netpoll.Interest) {
	if ev == c.events || c.state == stClosed {
		return
	}
	c.events = ev
	if err := c.l.poll.Mod(int(c.fd), c.serial, ev); err != nil {
		c.close(ErrClosed)
	}
}

// close releases the socket and everything the connection holds. A handler still running or
// parked on it is woken with err (ErrClosed or ErrShutdown) and finishes on its own; its Ctx
// goes back to the pool when it does.
func (c *conn) close(err error) {
	if c.state == stClosed {
		return
	}
	l := c.l
	c.state = stClosed
	l.timers.stop(&c.tm)
	l.conns[c.fd] = nil
	netpoll.Close(int(c.fd))
	l.nconns--
	c.in = nil
	c.dropSpill()
	c.out.release(&l.pool)
	if err == nil {
		err = ErrClosed
	}
	if cx := c.cx; cx != nil {
		if cx.state == ctxIdle {
			c.endRequest() // draining: the handler is done
		} else {
			cx.clientGone(err)
		}
	}
	if l.lfd >= 0 && !l.listening && !l.shutting && !l.atMaxConns() && !l.accTimer.t.armed() {
		l.listen()
	}
}

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
	return cx.suspend(parkWrite)
}

// waitReadable parks the handler cx until body bytes arrive, with the progress-based body
// timeout.
func (c *conn) waitReadable(cx *Ctx) error {
	if t := c.l.opts.BodyTimeout; t > 0 {
		c.setReadDeadline(t)
	}
	c.setInterest(c.events | netpoll.WatchRead | netpoll.WatchHangup)
	err := cx.suspend(parkRead)
	c.rdl = 0
	return err
}

// armTimer makes sure the connection's timer fires no later than when. A timer already due
// earlier is left alone and re-armed when it fires (fire): moving a deadline later, as every
// keep-alive request does, costs no heap operation.
func (c *conn) armTimer(when int64) {
	if !c.tm.armed() || c.tm.when > when {
		c.l.timers.set(&c.tm, when)
	}
}

// fire runs when the connection's timer is due: it acts on whichever deadline has passed.
func (c *conn) fire(l *Loop) {
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
			writeReject(c, wire.ErrHeaderTimeout)
			c.in = c.in[:0]
			c.keepAlive = false
			c.closeAfterOutput(true)
			c.settle()
		case stHandler:
			if c.cx.parkedOn(parkRead) {
				c.cx.wake(ErrTimeout)
			}
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
		l.timers.set(&c.tm, next)
	}
}
