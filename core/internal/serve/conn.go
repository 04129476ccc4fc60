package serve

import (
	"crypto/tls"
	"time"

	"github.com/dwellhttp/dwell/core/internal/engine"
	"github.com/dwellhttp/dwell/core/internal/netpoll"
	"github.com/dwellhttp/dwell/core/internal/wire"
)

// A Socket is one client connection: its events, reads, writes and close, and its hand-over; as
// the exchange its HTTP/1.1 requests are served on, one after another, it is package http1's
// conn, the Socket seen through HTTP/1.1's methods, which the Socket asks through the server's
// First (protocols.go); the states and fields HTTP/1.1 keeps on it are its own. An idle
// one holds no buffer and no Ctx: unparsed input lives in the loop's shared buffer during a turn
// and moves to a pooled spill buffer only if some is left over; a Ctx comes from the loop's pool
// when a request head is complete and goes back when the request is over; output lives in pooled
// chunks only until the socket takes it.
type Socket struct {
	Carrier     // first: its timer is the Socket's (see timer)
	engine.Conn // the descriptor, what the poller watches it for, its transport, its unparsed input (In)

	DrainLeft int32 // StDrain: unread body bytes the loop may still discard
	Scan      wire.HeadScan
	HeadSize  uint16 // what a read for a request head takes (http1's headRead); 0: its first
	KeepAlive bool   // the current request allows another after it
	Via       via    // the listener it came by, and whether it speaks TLS
	Spoke     bool   // a request has begun: it speaks HTTP/1.1 (see Multiplexer.Chooses)
	lingers   bool   // closed while its handler was under way: counted by Loop.Linger
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
	StIdle       connState = iota // waiting for the first byte of a request
	StHead                        // part of a request head has arrived
	StHandler                     // a handler owns the request (running, parked or detached)
	StDrain                       // the handler is done; discarding the rest of its body
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
	case StIdle, StHead, StDrain:
		c.Loop.first.Input(c)
	case StHandler:
		cx := c.Ctx
		if cx.ParkedOn(ParkRead) || cx.ParkedOn(ParkBody) {
			cx.Wake(nil) // the handler reads for itself, straight into its buffer
			return
		}
		// Input the handler does not want yet. The poller is level-triggered, so stop asking
		// about it until the handler reads; a hang-up stays watched unless it is this one.
		ev := c.Events() &^ netpoll.WatchRead
		if hangup {
			ev &^= netpoll.WatchHangup
			c.PeerEOF = true
			if cx.Body.Complete() {
				cx.clientGone(ErrClosed)
			}
		}
		c.SetInterest(ev)
	case StHandedOver:
		hc := c.Handed()
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
		ev := c.Events() &^ netpoll.WatchRead
		if hangup {
			ev &^= netpoll.WatchHangup
		}
		c.SetInterest(ev)
	case stLinger:
		c.readLinger()
	case StClosing:
		if hangup {
			c.PeerEOF = true
		}
		c.SetInterest(c.Events() &^ (netpoll.WatchRead | netpoll.WatchHangup))
	}
}

// ReadSocket reads what the socket has into p and returns how many bytes it took (0 when it had
// none): the client's end of input sets peerEOF, and a failed read closes the connection (ok
// false).
func (c *Socket) ReadSocket(p []byte) (n int, ok bool) {
	n, e := c.Transport().Read(int(c.FD), c, p)
	switch {
	case n > 0:
		return n, true
	case e == 0:
		c.PeerEOF = true
	case e == netpoll.EAGAIN || e == netpoll.EINTR:
	default:
		c.Close(ErrClosed)
		return 0, false
	}
	return 0, true
}

// MaxPipelined bounds the requests a connection runs in one turn of the loop.
const MaxPipelined = 64

// OutputBlocked reports whether the client has left so much output unread that the connection
// takes no more requests for now.
func (c *Socket) OutputBlocked() bool { return c.Out.Size() > c.HighWater() }

// HighWater is the output a connection holds before its writer parks: Options.WriteHighWater.
func (c *Socket) HighWater() int64 { return int64(c.Loop.Opts.WriteHighWater) }

// Settle ends a turn on c: unparsed input moves out of the shared buffer, queued output is
// written, and the poller is told what c waits for now.
func (c *Socket) Settle() {
	if c.State == StClosed {
		return
	}
	if c.PeerEOF && c.State == StIdle && len(c.In) == 0 {
		// The client shut its side and every request it sent is answered: nothing more can
		// come. (Without this, a client that left while its last handler ran would hold the
		// connection until the idle timeout, or until a reset from its host closed it.)
		c.CloseAfterOutput(false)
		if c.State == StClosed {
			return
		}
	}
	c.KeepInput(&c.Loop.Loop)
	if c.Out.Size() > 0 {
		c.Flush()
		if c.State == StClosed {
			return
		}
	}
	c.UpdateInterest()
}

// flush writes queued output until the socket is full, then waits for it to drain.
func (c *Socket) Flush() {
	if tr := c.Transport(); tr.Holds(int(c.FD)) && tr.FlushHeld(int(c.FD)) != 0 {
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
	goOn, closeNow := c.Sent(c.HighWater(), progressed)
	if goOn {
		c.Loop.Pending = append(c.Loop.Pending, c.Loop.first.Exchange(c))
	}
	if closeNow {
		c.finishClose()
		return
	}
	if c.State == StHandedOver {
		c.Handed().DrainedCheck()
	}
	c.UpdateInterest()
}

// UpdateInterest registers what the connection waits for. Readability is watched while the
// loop wants input; during a handler it is left as it is until input arrives that the handler
// does not want (onReadable), so the steady keep-alive path makes no epoll_ctl call.
func (c *Socket) UpdateInterest() {
	ev := c.Events()
	switch c.State {
	case StIdle, StHead, StDrain:
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
		if c.Handed().Is(HcUnread) || c.HeldBack {
			ev &^= netpoll.WatchRead
		} else {
			ev |= netpoll.WatchRead | netpoll.WatchHangup
		}
	case StHandler:
		switch {
		case c.Ctx.ParkedOn(ParkRead) || c.Ctx.ParkedOn(ParkBody):
			ev |= netpoll.WatchRead | netpoll.WatchHangup
		case c.Owned():
			// A socket the poller reads itself would receive input the handler may not want
			// for long (behind a parked request) into the loop's memory: it stays in the kernel
			// instead, and only a hang-up is watched.
			ev &^= netpoll.WatchRead
		}
	}
	if c.PeerEOF {
		ev &^= netpoll.WatchRead | netpoll.WatchHangup
	}
	if c.Out.Size() > 0 || c.Ctx != nil && c.Ctx.ParkedOn(ParkWrite) || c.Transport().Holds(int(c.FD)) {
		ev |= netpoll.WatchWrite // output to send, or a writer waiting for room to send from its own buffer
	} else {
		ev &^= netpoll.WatchWrite
	}
	c.SetInterest(ev)
}

// SetInterest tells the poller that c waits for ev, unless it already does (engine.Conn.Watch;
// see UpdateInterest).
func (c *Socket) SetInterest(ev netpoll.Interest) {
	if ev == c.Events() || c.State == StClosed {
		return // the steady path: no call at all
	}
	if err := c.Watch(&c.Loop.Loop, c.Serial, ev); err != nil {
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
	handed := c.IsHanded()
	c.State = StClosed
	l.Timers.Stop(&c.Timer)
	l.Conns[c.FD] = nil
	if l.given != nil {
		delete(l.given, c.FD) // ServeConn's remote address, if it gave one
	}
	l.NConns--
	c.Out.Release(&l.Pool, c.InFlight(&l.Loop)) // before Release forgets the send under way
	c.Release(&l.Loop, c.Ending >= CloseReset)
	if handed {
		hc := l.handed[c.FD]
		l.handed[c.FD] = nil
		hc.ClosedBy(err)
	}
	c.WakeOnClose(err)
	if c.Ctx != nil { // its handler is still under way: it counts until it returns (DropCtx)
		c.lingers = true
		l.Linger()
	}
	l.resumeAccept()
}

// DropCtx gives the request's Ctx back to the loop, reporting whether there was one; the
// handler of a connection that closed under it no longer counts against MaxConns.
func (c *Socket) DropCtx() bool {
	if !c.Carrier.DropCtx() {
		return false
	}
	if c.lingers {
		c.lingers = false
		c.Loop.EndLinger()
	}
	return true
}

// OnPeerEOF handles the client's end of input seen by the loop's own read.
func (c *Socket) OnPeerEOF() {
	switch c.State {
	case StIdle, StHead, StDrain:
		// Nothing more will come: a partial request or body is abandoned, and a finished
		// exchange ends once its responses are out.
		c.DropCtx()
		c.CloseAfterOutput(false)
	}
	c.SetInterest(c.Events() &^ (netpoll.WatchRead | netpoll.WatchHangup))
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
	if c.Ending != closeLinger || c.PeerEOF {
		c.Close(nil)
		return
	}
	c.Transport().ShutdownWrite(int(c.FD))
	c.State = stLinger
	c.SetReadDeadline(lingerTimeout)
	c.SetInterest(netpoll.WatchRead | netpoll.WatchHangup)
}

func (c *Socket) readLinger() {
	for c.State == stLinger {
		n, e := c.Transport().Read(int(c.FD), c, c.Loop.Buf)
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

// Base returns c's Carrier, what each exchange of c begins with (Exchange.Base: HTTP/1.1's conn
// is the Socket, and its Carrier the Socket's).
func (c *Socket) Base() *Carrier { return &c.Carrier }

// TLSState returns the state of c's TLS connection, or nil when c is plain (Exchange.TLSState).
func (c *Socket) TLSState() *tls.ConnectionState { return c.Transport().State(int(c.FD), c) }

// Handed returns the Conn a handed-over c belongs to: the loop keeps a connection's by its
// descriptor.
func (c *Socket) Handed() *Conn { return c.Loop.handed[c.FD] }

// IsHanded reports whether c has been handed over and is not closed yet (it may be closing).
func (c *Socket) IsHanded() bool {
	l := c.Loop
	return int(c.FD) < len(l.handed) && l.handed[c.FD] != nil && l.handed[c.FD].Serial == c.Serial
}
