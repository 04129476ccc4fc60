package serve

import (
	"time"

	"github.com/dwellhttp/dwell/core/internal/netpoll"
	"github.com/dwellhttp/dwell/core/internal/wire"
	"github.com/dwellhttp/dwell/internal/alias"
)

// A Socket is one client connection: its events, reads, writes and close, and its hand-over; as
// the exchange its HTTP/1.1 requests are served on, one after another, it is an h1conn. An idle
// one holds no buffer and no Ctx: unparsed input lives in the loop's shared buffer during a turn
// and moves to a pooled spill buffer only if some is left over; a Ctx comes from the loop's pool
// when a request head is complete and goes back when the request is over; output lives in pooled
// chunks only until the socket takes it.
type Socket struct {
	Carrier // first: its timer is the Socket's (see timer)
	FD      int32
	spill   int32 // the spill buffer holding in: 1 + its index in the loop's spills; 0 when none

	drainLeft int32 // stDrain: unread body bytes the loop may still discard
	Scan      wire.HeadScan
	headSize  uint16           // what a read for a request head takes (see headRead); 0: headReadFirst
	events    netpoll.Interest // what the poller watches the socket for
	keepAlive bool             // the current request allows another after it
	polled    bool             // registered with the poller (see Loop.open); until then events is only noted
	Via       via              // the listener it came by, and whether it speaks TLS
	spoke     bool             // a request has begun: it speaks HTTP/1.1 (see Multiplexer.Chooses)

	in []byte // unparsed input: in the loop buffer during a turn, in a spill buffer between turns
}

// A closeHow says how a connection closes once its output is written (see finishClose).
type closeHow uint8

const (
	closeAtOnce closeHow = iota // the client sends nothing more that matters
	closeLinger                 // shut down writes and drain the client's input first
	CloseReset                  // reset the connection: an aborted response must not look whole
	CloseFailed                 // reset it: the code that owned it failed (a Protocol's panic)
)

type connState uint8

const (
	stIdle       connState = iota // waiting for the first byte of a request
	stHead                        // part of a request head has arrived
	StHandler                     // a handler owns the request (running, parked or detached)
	stDrain                       // the handler is done; discarding the rest of its body
	StClosing                     // no more requests: close once the output is written
	stLinger                      // output written and write side shut; draining input, then close
	StHandedOver                  // HTTP is over: the bytes are a Protocol's (handover.go)
	StClosed
)

// Bounds on the work done for a request the handler did not finish reading, and on a closing
// connection's lingering, which lets the client read a final response (a 413, say) instead of
// losing it to a reset caused by its own unread upload.
const (
	DrainMax      = 256 << 10
	lingerTimeout = 2 * time.Second
)

// An h1conn is a Socket as HTTP/1.1 serves it: the exchange of its requests, one after another.
// It is the Socket itself, seen through HTTP/1.1's methods (h1).
type h1conn struct{ Socket }

// h1 is c as HTTP/1.1's connection.
func h1(c *Socket) *h1conn { return alias.Outer[h1conn](c) }

func (c *Socket) onEvent(ev *netpoll.Event) {
	if ev.Failed() {
		// Both directions are shut: the client reset the connection, or it finished closing
		// while we lingered.
		c.Close(ErrClosed)
		return
	}
	if ev.Writable() {
		c.Flush()
		if c.State == StClosed {
			return
		}
	}
	if ev.Readable() {
		c.onReadable(ev.PeerClosed())
	}
}

func (c *Socket) onReadable(hangup bool) {
	switch c.State {
	case stIdle, stHead, stDrain:
		c.readInput()
	case StHandler:
		cx := c.Ctx
		if cx.ParkedOn(ParkRead) || cx.ParkedOn(ParkBody) {
			cx.Wake(nil) // the handler reads for itself, straight into its buffer
			return
		}
		// Input the handler does not want yet. The poller is level-triggered, so stop asking
		// about it until the handler reads; a hang-up stays watched unless it is this one.
		ev := c.events &^ netpoll.WatchRead
		if hangup {
			ev &^= netpoll.WatchHangup
			c.peerEOF = true
			if cx.Body.complete() {
				cx.clientGone(ErrClosed)
			}
		}
		c.setInterest(ev)
	case StHandedOver:
		hc := c.handed()
		switch {
		case hc.Is(HcPaused):
			hc.Set(HcUnread) // ResumeReading asks again
		case c.HeldBack || c.OutputBlocked():
			// The client leaves its output unread: what it sends waits in the kernel until it
			// has read enough (AfterSend), so that no input can make the output grow further.
			c.HeldBack = true
		default:
			c.readHandedOver()
			return
		}
		// Not now. A hang-up is not watched either meanwhile: the bytes before it are still to
		// be read, and the read that meets the end of the input closes the connection.
		ev := c.events &^ netpoll.WatchRead
		if hangup {
			ev &^= netpoll.WatchHangup
		}
		c.setInterest(ev)
	case stLinger:
		c.readLinger()
	case StClosing:
		if hangup {
			c.peerEOF = true
		}
		c.setInterest(c.events &^ (netpoll.WatchRead | netpoll.WatchHangup))
	}
}

// readInput reads what the socket has into the loop buffer, behind any input held from before,
// and serves the requests it completes.
func (c *Socket) readInput() {
	l := c.Loop
	if c.OutputBlocked() {
		c.UpdateInterest()
		return
	}
	k := copy(l.Buf, c.in)
	c.dropSpill()
	end := len(l.Buf)
	head := c.State != stDrain
	if head {
		// A request head, and what follows it: what follows may stay unread in memory for as
		// long as the request's handler waits (see headRead), so no more is taken than the
		// connection's heads have been seen to need, and the kernel and the client's own flow
		// control hold the rest.
		end = min(end, k+h1(c).headReadSize())
	}
	if k < end {
		n, ok := c.readSocket(l.Buf[k:end])
		if !ok {
			return
		}
		if head && n > 0 && k+n == end {
			h1(c).growHeadRead()
		}
		k += n
	}
	c.in = l.Buf[:k]
	h1(c).serve()
	if c.peerEOF {
		c.onPeerEOF()
	}
	c.settle()
}

// readSocket reads what the socket has into p and returns how many bytes it took (0 when it had
// none): the client's end of input sets peerEOF, and a failed read closes the connection (ok
// false).
func (c *Socket) readSocket(p []byte) (n int, ok bool) {
	n, e := c.tr().Read(int(c.FD), c, p)
	switch {
	case n > 0:
		return n, true
	case e == 0:
		c.peerEOF = true
	case e == netpoll.EAGAIN || e == netpoll.EINTR:
	default:
		c.Close(ErrClosed)
		return 0, false
	}
	return 0, true
}

// MaxPipelined bounds the requests a connection runs in one turn of the loop.
const MaxPipelined = 64

// Bounds on the input a connection holds while its request's handler waits (parked, detached or
// streaming its response) and nothing reads it. Every read stops near what the request needs:
// one for a request head takes the connection's head read size (a larger head takes several),
// one for a chunked body the rest of the chunk being read and headRead more (a Content-Length
// body is read straight into the handler's buffer, never past its end). So what waits in memory
// for a handler that has not read it yet — the start of its own body, or bytes past the
// request's end — is what the last read took past the head or the chunk: less than that read's
// size, which is headReadFirst for a head that a new connection's first read holds whole, and
// headRead at most (about headRead past a chunked body's end; after a drained body's read, what
// that read took, the loop's read buffer at most).
// The connection is not read again until the handler wants input: the kernel holds the rest,
// and TCP's flow control holds the client. (Over TLS, crypto/tls holds what is left of the
// record it last decrypted besides: see engine.TLS.) What is past the request's end is kept
// whatever it looks like, since the handler may hand the connection over (HandOver, a net/http
// Hijack), whose new owner gets those bytes first; if it does not, they are the next request's,
// or refused as one.
//
// Bytes once read cannot be given back to the kernel, so a connection's head reads start small:
// headReadFirst bytes take the whole head of most clients other than browsers (wrk's, curl's,
// Go's) in one call, and a keep-alive client whose heads fit makes one read a request. A read
// that fills its size says that the client sends more at once (a larger head, pipelined
// requests), so the connection's head reads grow fourfold each time one does, up to headRead:
// such a client makes a few more reads at its start, each in a turn of the loop of its own (two
// more at most, for a head or a batch of requests of up to 4 KiB), and then one a head or a
// batch, as it would with headRead from the first. They do not shrink again: on a connection
// that has grown them, the bound above is headRead's.
const (
	headReadFirst = 256
	headRead      = 4 << 10
)

// headReadSize is what c's next read for a request head takes.
func (c *h1conn) headReadSize() int { return max(int(c.headSize), headReadFirst) }

// growHeadRead grows c's head reads after one filled its size.
func (c *h1conn) growHeadRead() { c.headSize = uint16(min(4*c.headReadSize(), headRead)) }

// serve runs the requests in c.in until it runs out of input or a handler keeps the
// connection: several pipelined requests are answered in one turn, and their responses leave
// in one write. Two bounds keep one client from taking more than its share: at most
// MaxPipelined requests a turn (the rest wait for the next iteration, behind other
// connections), and no new request while the client leaves more than WriteHighWater of
// responses unread (reading resumes once it has taken half).
func (c *h1conn) serve() {
	c.Loop.TurnLeft = MaxPipelined
	for {
		if c.OutputBlocked() {
			c.HeldBack = true // AfterSend resumes it once the client has read enough
			return
		}
		if c.Loop.TurnLeft <= 0 {
			c.Loop.Pending = append(c.Loop.Pending, c)
			return
		}
		switch c.State {
		case stIdle, stHead:
			if !c.nextRequest() {
				return
			}
		case stDrain:
			if !c.drain() {
				return
			}
		case StHandedOver:
			c.deliver()
			return
		default:
			return
		}
	}
}

// OutputBlocked reports whether the client has left so much output unread that the connection
// takes no more requests for now.
func (c *Socket) OutputBlocked() bool { return c.Out.Size() > c.HighWater() }

// HighWater is the output a connection holds before its writer parks: Options.WriteHighWater.
func (c *Socket) HighWater() int64 { return int64(c.Loop.Opts.WriteHighWater) }

// settle ends a turn on c: unparsed input moves out of the shared buffer, queued output is
// written, and the poller is told what c waits for now.
func (c *Socket) settle() {
	if c.State == StClosed {
		return
	}
	if c.peerEOF && c.State == stIdle && len(c.in) == 0 {
		// The client shut its side and every request it sent is answered: nothing more can
		// come. (Without this, a client that left while its last handler ran would hold the
		// connection until the idle timeout, or until a reset from its host closed it.)
		c.CloseAfterOutput(false)
		if c.State == StClosed {
			return
		}
	}
	c.keepInput()
	if c.Out.Size() > 0 {
		c.Flush()
		if c.State == StClosed {
			return
		}
	}
	c.UpdateInterest()
}

// keepInput moves unparsed bytes out of the loop buffer, which the next connection's turn will
// overwrite, into a spill buffer sized for them.
func (c *Socket) keepInput() {
	l := c.Loop
	switch {
	case len(c.in) == 0:
		c.dropSpill()
		c.in = nil
	case l.owns(c.in):
		c.dropSpill()
		b := append(l.Pool.Get(len(c.in)), c.in...)
		c.spill = l.spills.Hold(b)
		c.in = b
	}
}

func (c *Socket) dropSpill() {
	if c.spill != 0 {
		c.Loop.spills.Release(c.spill, &c.Loop.Pool)
		c.spill = 0
	}
}

// flush writes queued output until the socket is full, then waits for it to drain.
func (c *Socket) Flush() {
	if tr := c.tr(); tr.Holds(int(c.FD)) && tr.FlushHeld(int(c.FD)) != 0 {
		c.Close(ErrClosed)
		return
	}
	progressed, err := c.Out.Send(c.Sender(), c.Loop.IOV, &c.Loop.Pool, nil)
	if err != nil {
		c.Close(ErrClosed)
		return
	}
	c.AfterSend(progressed)
}

// AfterSend updates deadlines, parked writers and closing after bytes were (or were not) written
// (Carrier.Sent), and what the poller watches.
func (c *Socket) AfterSend(progressed bool) {
	if c.Sent(h1(c), c.HighWater(), progressed) {
		c.finishClose()
		return
	}
	if c.State == StHandedOver {
		c.handed().DrainedCheck()
	}
	c.UpdateInterest()
}

// UpdateInterest registers what the connection waits for. Readability is watched while the
// loop wants input; during a handler it is left as it is until input arrives that the handler
// does not want (onReadable), so the steady keep-alive path makes no epoll_ctl call.
func (c *Socket) UpdateInterest() {
	ev := c.events
	switch c.State {
	case stIdle, stHead, stDrain:
		switch {
		case c.handshakeDeferred():
			// Its handshake waits its turn (engine/tlsturn.go): nothing is read meanwhile, and a
			// hang-up is seen by the read that finally comes.
			ev &^= netpoll.WatchRead | netpoll.WatchHangup
		case c.OutputBlocked():
			ev &^= netpoll.WatchRead
		default:
			ev |= netpoll.WatchRead | netpoll.WatchHangup
		}
	case stLinger:
		ev |= netpoll.WatchRead | netpoll.WatchHangup
	case StHandedOver:
		// A pause alone leaves the interest as it is (PauseReading); output held back stops
		// reading as HTTP's does.
		if c.handed().Is(HcUnread) || c.HeldBack {
			ev &^= netpoll.WatchRead
		} else {
			ev |= netpoll.WatchRead | netpoll.WatchHangup
		}
	case StHandler:
		if c.Ctx.ParkedOn(ParkRead) || c.Ctx.ParkedOn(ParkBody) {
			ev |= netpoll.WatchRead | netpoll.WatchHangup
		}
	}
	if c.peerEOF {
		ev &^= netpoll.WatchRead | netpoll.WatchHangup
	}
	if c.Out.Size() > 0 || c.Ctx != nil && c.Ctx.ParkedOn(ParkWrite) || c.tr().Holds(int(c.FD)) {
		ev |= netpoll.WatchWrite // output to send, or a writer waiting for room to send from its own buffer
	} else {
		ev &^= netpoll.WatchWrite
	}
	c.setInterest(ev)
}

func (c *Socket) setInterest(ev netpoll.Interest) {
	if ev == c.events || c.State == StClosed {
		return
	}
	c.events = ev
	if !c.polled {
		return // Loop.open registers it for c.events
	}
	if err := c.Loop.poll.Mod(int(c.FD), c.Serial, ev); err != nil {
		c.Close(ErrClosed)
	}
}

// close releases the socket and everything the connection holds. A handler still running or
// parked on it is woken with err (ErrClosed or ErrShutdown) and finishes on its own; its Ctx
// goes back to the pool when it does.
func (c *Socket) Close(err error) {
	if c.State == StClosed {
		return
	}
	l := c.Loop
	handed := c.isHanded()
	c.State = StClosed
	l.Timers.Stop(&c.Timer)
	l.conns[c.FD] = nil
	if l.given != nil {
		delete(l.given, c.FD) // ServeConn's remote address, if it gave one
	}
	l.nconns--
	c.tr().Close(int(c.FD), c.Ending >= CloseReset)
	c.in = nil
	c.dropSpill()
	c.Out.Release(&l.Pool)
	if handed {
		hc := l.handed[c.FD]
		l.handed[c.FD] = nil
		hc.ClosedBy(err)
	}
	c.WakeOnClose(err)
	if l.acc.Paused() && !l.shutting && !l.atMaxConns() && !l.accTimer.t.Armed() {
		l.acc.Listen()
	}
}

// onPeerEOF handles the client's end of input seen by the loop's own read.
func (c *Socket) onPeerEOF() {
	switch c.State {
	case stIdle, stHead, stDrain:
		// Nothing more will come: a partial request or body is abandoned, and a finished
		// exchange ends once its responses are out.
		c.DropCtx()
		c.CloseAfterOutput(false)
	}
	c.setInterest(c.events &^ (netpoll.WatchRead | netpoll.WatchHangup))
}

// CloseAfterOutput ends the connection once its queued output is written. linger says the
// client may still be sending, so its input is drained before the close (see finishClose).
func (c *Socket) CloseAfterOutput(linger bool) {
	if c.State == StClosed {
		return
	}
	c.State = StClosing
	if linger && c.Ending == closeAtOnce {
		c.Ending = closeLinger
	}
	c.ReadDeadline = 0
	if c.Out.Size() == 0 {
		c.finishClose()
	}
}

// finishClose closes a connection whose output is written. Closing a socket that still has
// unread input makes the kernel send a reset, which can destroy the response before the client
// reads it; so when the client may still be sending, shut down our side, discard what arrives
// for a bounded time, and close when the client does.
func (c *Socket) finishClose() {
	if c.Ending >= CloseReset {
		c.Close(nil) // the transport resets it
		return
	}
	if c.Ending != closeLinger || c.peerEOF {
		c.Close(nil)
		return
	}
	c.tr().ShutdownWrite(int(c.FD))
	c.State = stLinger
	c.SetReadDeadline(lingerTimeout)
	c.setInterest(netpoll.WatchRead | netpoll.WatchHangup)
}

func (c *Socket) readLinger() {
	for c.State == stLinger {
		n, e := c.tr().Read(int(c.FD), c, c.Loop.Buf)
		switch {
		case n > 0:
		case e == netpoll.EAGAIN:
			return
		case e == netpoll.EINTR:
		default:
			c.Close(nil)
		}
	}
}
