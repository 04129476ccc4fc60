package serve

import (
	"errors"
	"net/netip"
	"time"

	"github.com/dwellhttp/dwell/core/internal/engine"
)

// What follows HTTP on a connection. A handler hands its connection over (Ctx.HandOver) to
// another owner of its bytes — a WebSocket, the net/http bridge's hijacked connection — after a
// 101 Switching Protocols or, for a raw takeover, after nothing at all. The connection stays on
// its loop, in a state of its own (StHandedOver): the HTTP parser never sees its bytes again;
// they go, as they arrive, to the Protocol, those that came behind the request's head first.
// Its output goes through the same write queue and transport as HTTP's, with the same
// high-water mark and write timeout, and the same rule: a connection whose output is over the
// mark is not read until it has drained to half of it, so that a client that sends without
// reading (a flood of pings whose pongs it never takes) is held back by TCP, not by the
// server's memory. Its deadline, a shutdown and its close are the Protocol's to hear of.

// A Protocol is what owns a connection once HTTP has handed it over (Ctx.HandOver). Its methods
// are called on the connection's loop, one at a time, outside any request (they must not block,
// and cannot park); a panic in one is logged and closes the connection at once, as Abort does
// (an HTTP/2 stream handed over is reset), and Closed follows with ErrProtocolPanic — a panic in
// Closed itself is logged, and nothing more is called.
type Protocol interface {
	// Receive gives the protocol the bytes that have arrived — those that came behind the
	// request's head first — and returns how many it took: the rest are given again, with what
	// arrives next. in is borrowed, valid only during the call. A protocol that takes nothing
	// while the bytes fill the loop's read buffer closes the connection (ErrInputFull). It is
	// not called while the connection's output is over the high-water mark (see Write).
	Receive(c *Conn, in []byte) (used int)
	// Drained says that the output queued, once over the high-water mark
	// (Options.WriteHighWater), has gone under half of it.
	Drained(c *Conn)
	// Timeout says that the deadline set with Conn.SetTimeout has passed.
	Timeout(c *Conn)
	// Shutdown says that the server is shutting down: the protocol ends its way (a WebSocket
	// sends its close frame) and calls Close. When the shutdown's grace period ends, the
	// connection is closed whatever it does.
	Shutdown(c *Conn)
	// Closed says that the connection has closed, and why: nil after Close, ErrClosed when the
	// client left, ErrTimeout when its output made no progress for Options.WriteTimeout,
	// ErrShutdown at the end of a shutdown's grace period, ErrInputFull, ErrProtocolPanic after
	// a panic in one of the protocol's methods. It is the last call.
	Closed(c *Conn, err error)
}

// A Face calls the protocols that applications hand connections to through package core: a
// protocol stays as the application gave it (Conn.Proto), its methods taking core's Conn, which
// is laid out as this package's; a Protocol of this package's own (HTTP/2's, HandOverConn's)
// is called directly. So a hand-over costs nothing beside the Conn, whoever's protocol it is.
type Face interface {
	Receive(p any, c *Conn, in []byte) int
	Drained(p any, c *Conn)
	Timeout(p any, c *Conn)
	Shutdown(p any, c *Conn)
	Closed(p any, c *Conn, err error)
}

// face is core's: SetFace, once, before any server runs.
var face Face

// SetFace makes f the caller of the protocols applications give through core.
func SetFace(f Face) { face = f }

// ProtocolReceive gives in to the connection's protocol (Protocol.Receive).
func (hc *Conn) ProtocolReceive(in []byte) int {
	if p, ok := hc.Proto.(Protocol); ok {
		return p.Receive(hc, in)
	}
	return face.Receive(hc.Proto, hc, in)
}

// ProtocolDrained tells the connection's protocol that its output has drained.
func (hc *Conn) ProtocolDrained() {
	if p, ok := hc.Proto.(Protocol); ok {
		p.Drained(hc)
		return
	}
	face.Drained(hc.Proto, hc)
}

// ProtocolTimeout tells the connection's protocol that its deadline has passed.
func (hc *Conn) ProtocolTimeout() {
	if p, ok := hc.Proto.(Protocol); ok {
		p.Timeout(hc)
		return
	}
	face.Timeout(hc.Proto, hc)
}

// ProtocolShutdown tells the connection's protocol that the server is shutting down.
func (hc *Conn) ProtocolShutdown() {
	if p, ok := hc.Proto.(Protocol); ok {
		p.Shutdown(hc)
		return
	}
	face.Shutdown(hc.Proto, hc)
}

// protocolEndGrace tells the connection's protocol that the shutdown's grace period is over.
func (hc *Conn) protocolEndGrace() { hc.Proto.(GraceEnder).EndGrace(hc) }

// ProtocolClosed tells the connection's protocol that the connection has closed, and why.
func (hc *Conn) ProtocolClosed(err error) {
	if p, ok := hc.Proto.(Protocol); ok {
		p.Closed(hc, err)
		return
	}
	face.Closed(hc.Proto, hc, err)
}

// ErrInputFull closes a handed-over connection whose Protocol takes none of the bytes that fill
// the loop's read buffer: it can make no progress.
var ErrInputFull = errors.New("dwell: a handed-over connection's protocol took none of a full buffer")

// ErrProtocolPanic is what Closed hears when one of the Protocol's own methods panicked: the
// panic is logged and the connection closed at once, as Abort closes it (an HTTP/2 stream is
// reset, INTERNAL_ERROR), so that a protocol whose state is now unknown is not called again
// with the client's next bytes. The server goes on serving the other connections.
var ErrProtocolPanic = errors.New("dwell: a handed-over connection's protocol panicked")

// A Conn is a connection handed over from HTTP to a Protocol (Ctx.HandOver). Its methods must be
// called on its loop — from the Protocol's own methods, a handler or continuation of that loop,
// a Loop.Post callback — and the output they queue leaves at the end of the loop's turn.
type Conn struct {
	Exchange Exchange // the connection, or the HTTP/2 stream, handed over
	Proto    any      // a Protocol, or an application's through core (see Face)
	remote   *Remote  // the goroutine side, once asked for (remote.go)
	Serial   uint32   // ex's, to tell it from a later exchange on the same descriptor or stream
	flags    hcFlags
}

// hcFlags are a Conn's state, in a byte: a Conn is a part of every handed-over connection's
// cost, and so a few bytes count (bools would make it the next size class).
type hcFlags uint8

const (
	hcOver    hcFlags = 1 << iota // the output went over the high-water mark: Drained is owed
	hcClosing                     // Close was called
	hcClosed
	HcPaused  // PauseReading
	HcUnread  // paused, and the client sent more: the socket's read interest is off
	hcFlushed // in the loop's list of connections to flush at the end of the turn
	hcFailed  // a method of p panicked: Closed hears ErrProtocolPanic
)

func (hc *Conn) Is(f hcFlags) bool { return hc.flags&f != 0 }
func (hc *Conn) Set(f hcFlags)     { hc.flags |= f }
func (hc *Conn) clear(f hcFlags)   { hc.flags &^= f }

// base returns the Carrier of what was handed over.
func (hc *Conn) base() *Carrier { return hc.Exchange.Base() }

// ErrHandOverHTTP2 is what HandOver (and HandOverConn) return for a request on an HTTP/2
// stream other than an extended CONNECT's: its connection carries other streams, and is not the
// request's to give. (The net/http bridge's Hijack answers http.ErrNotSupported then, as
// net/http's does over HTTP/2.)
var ErrHandOverHTTP2 = errors.New("dwell: HandOver on an HTTP/2 stream: the connection is not the request's own")

// errHandOver says why a request's connection cannot be handed over.
var (
	ErrHandOverBody     = errors.New("dwell: HandOver before the request body was read to its end")
	ErrHandOverResponse = errors.New("dwell: HandOver after a response other than a 101 started")
	ErrHandOverTunnel   = errors.New("dwell: HandOver of an extended CONNECT's stream with a status other than 2xx")
)

// HandOver hands the request's connection to p (a Protocol, or an application's given through
// core: see Face): from the end of the loop's turn on, its bytes are p's, those that came
// behind the request's head first, and its output is what p writes through the returned Conn. With the status set to 101 (and the header fields of the protocol
// switch, Upgrade among them), the 101 response goes out first, with Connection: Upgrade, no
// Content-Length and nothing else of the server's but Date; with no status set and nothing
// written, nothing is sent at all (a raw takeover, as net/http's Hijack). Any other response
// under way, or a request body not read to its end, is an error, and the connection stays
// HTTP's.
//
// The handler may return at once — the connection then lives on without a coroutine, costing
// its Conn and its state, and the request ends as usual (its completion hooks see the 101) —
// or go on, parked (Suspend, Seam.Hold) while p wakes it, or detached (Detach, and the waits made
// of it, such as wait.Topic's OnNext), until it returns: the connection's close wakes it with
// ErrClosed, the end of a shutdown's grace period with ErrShutdown, and its completion hooks
// run when it ends. Either way the connection is p's until it closes; the request's response
// can no longer be written.
//
// On an HTTP/2 stream opened by an extended CONNECT (RFC 8441; see Seam.ConnectProtocol), what is
// handed over is the stream: with no status set, or a 2xx one (not 101), the response's HEADERS
// go out without ending the stream, and from then on the stream's DATA is p's input and what p
// writes leaves as DATA, within the stream's flow-control windows; Close ends the stream
// (END_STREAM), Abort resets it, the client's END_STREAM is the end of its input. The request
// body not read yet is not in the way: it is the start of p's input. A 2xx, which tells the
// client that its tunnel is open, is HandOver's alone: any other 2xx a handler gives an extended
// CONNECT (a GET route's page, say) goes out as the server's 501 Not Implemented
// (ErrTunnelRefused), and its other statuses (400, 403, 404, 426) as they are.
func (cx *Ctx) HandOver(p any) (*Conn, error) {
	if !cx.owned() {
		return nil, cx.misused("HandOver")
	}
	if cx.Carrier.State == StClosed {
		return nil, ErrClosed
	}
	return cx.Exchange.HandOver(cx, p)
}

// DropResponseFields gives back what held the response's header fields, written now: a
// handler that goes on for the protocol's life (the sequential style of a WebSocket) would
// keep them for nothing. The request's own fields, and a router's parameters, stay the
// handler's to read.
func (cx *Ctx) DropResponseFields() {
	x := cx.Extra
	if x == nil {
		return
	}
	if x.hdrs != nil {
		cx.Loop.Pool.Put(x.hdrs)
		x.hdrs, x.names = nil, 0
	}
	if x.params == nil && x.Rare == nil {
		cx.Extra = nil
		cx.Loop.putExtra(x) // for the next request that sets a field, not garbage
	}
}

// DrainedCheck tells a handed-over connection's protocol that its output has drained, once it
// has gone under half the high-water mark after being over it.
func (hc *Conn) DrainedCheck() {
	if hc.Is(hcOver) && hc.base().Out.Size() <= hc.Exchange.HighWater()/2 {
		hc.clear(hcOver)
		if hc.remote != nil {
			hc.remote.st.Drained()
		}
		hc.CallProtocol(hc.ProtocolDrained)
	}
}

// ClosedBy tells a handed-over connection's protocol that it has closed, with err: the last call.
// The exchange has forgotten it already.
func (hc *Conn) ClosedBy(err error) {
	switch {
	case hc.Is(hcFailed):
		err = ErrProtocolPanic
	case err == nil && !hc.Is(hcClosing):
		err = ErrClosed // nil stays nil only after Close: a close of the protocol's own
	}
	if !hc.Is(hcClosing) {
		hc.reportEnd(err) // the connection ended by itself: the client left, a timeout
	}
	hc.Set(hcClosed)
	if hc.remote != nil {
		hc.remote.st.Closed(err)
	}
	// Not CallProtocol: a panic in the last call has nothing left to close.
	hc.base().Loop.safely(func() { hc.ProtocolClosed(err) })
}

// CallProtocol runs f, a call of one of the Protocol's methods (Receive, Drained, Timeout,
// Shutdown; not Closed, the last), on the loop. A panic in it is logged and closes the
// connection at once, as Abort does — its queued output dropped, the client told by a reset (a
// stream's RST_STREAM INTERNAL_ERROR, as net/http resets the stream of a handler that
// panicked) — and Closed hears ErrProtocolPanic: the protocol's state is unknown after it, and a
// connection left open would give it the client's next bytes, to panic again on each.
func (hc *Conn) CallProtocol(f func()) {
	if !hc.base().Loop.safely(f) || hc.Is(hcClosed) {
		return
	}
	hc.reportEnd(ErrProtocolPanic) // unless its end was told first (a Close before the panic)
	hc.Set(hcFailed | hcClosing)
	hc.base().Ending = CloseFailed
	hc.Exchange.Close(ErrClosed) // a handler still under way wakes as when the client leaves
}

// How a handed-over connection's end ends the request that handed it over, when that request
// is still under way (a handler that goes on for the protocol's life, parked while it waits —
// the sequential style of a WebSocket): the connection's close wakes it with ErrClosed,
// whoever closed it, so the request's Done.Err would say that the client left after a close
// of the protocol's own (a close handshake the client completed) as after a client that
// vanished. So the end is recorded when it is decided — when the protocol closes the
// connection (Close, Abort: no error, unless SetErr said why), or when it closes by itself
// (ErrClosed, ErrTimeout, ErrShutdown, ErrInputFull) — and outcome reports it, whatever woke
// the handler after.

// A handedEnd is how a handed-over connection ended, kept for the request that handed it
// over in the field the server's own answers use for Done.Err (ctxRare.answered), which such a
// request has no other use for: its response went out at the hand-over.
type handedEnd struct{ err error }

func (e *handedEnd) Error() string {
	if e.err == nil {
		return "dwell: the handed-over connection was closed by its protocol"
	}
	return e.err.Error()
}

// handedClean is the end of a connection its protocol closed with no error to report.
var handedClean = &handedEnd{}

// reportEnd records err (nil: none) as how the connection ended, for the request that handed
// it over if it is still under way and has completion hooks to tell. The first end recorded
// counts, and none replaces what the request ended with before (its deadline passed, a
// shutdown's grace period ended).
func (hc *Conn) reportEnd(err error) {
	cx := hc.base().Ctx
	if cx == nil || cx.State == CtxIdle || cx.Gone != 0 || !cx.hasDoneHooks() {
		return
	}
	r := cx.Extra.Rare
	if r.answered != nil {
		return
	}
	if err == nil {
		r.answered = handedClean
	} else {
		r.answered = &handedEnd{err}
	}
}

// Write queues a copy of p for the client. It never blocks: the bytes wait in the connection's
// queue until the socket takes them, and Buffered says how many wait. Past the high-water mark
// (Options.WriteHighWater) the connection is not read until its output has drained to half of
// it, so that what a protocol writes in answer to its input stays within the mark and the
// answer to one read (at most the loop's read buffer, 64 KiB, of input); what it writes of its
// own accord (a broadcast) it should stop writing until Drained, or drop the client: the
// queue is not bounded otherwise. It returns ErrClosed once the connection has closed.
func (hc *Conn) Write(p []byte) error {
	if !hc.alive("Write") || hc.Is(hcClosing) {
		return ErrClosed
	}
	hc.Queue(p)
	return nil
}

// queue is Write for the loop's own code, which is on the loop and knows the connection open.
func (hc *Conn) Queue(p []byte) {
	c := hc.base()
	if c.Out.Size() == 0 && len(p) >= smallChunkWrite && len(p) < engine.MinChunkSize {
		// A write alone in the queue, as a broadcast's frame is to each of thousands of
		// connections in one turn, takes a buffer of its size rather than a chunk of
		// engine.MinChunkSize: the pool keeps thousands of those, not of these.
		c.Out.PushBuffer(&c.Loop.Pool, append(c.Loop.Pool.Get(len(p)), p...))
	} else {
		c.Out.Write(&c.Loop.Pool, p)
	}
	hc.queued()
}

// QueueBuffer queues b, a buffer of the loop's pool, as it stands: the queue owns it from now
// on (a stream's body moved rather than copied, http2's response.go).
func (hc *Conn) QueueBuffer(b []byte) {
	c := hc.base()
	c.Out.PushBuffer(&c.Loop.Pool, b)
	hc.queued()
}

// queued notes output just queued: past the high-water mark the Remote is told, and the
// output is written at the end of the turn.
func (hc *Conn) queued() {
	c := hc.base()
	if !hc.Is(hcOver) && c.Out.Size() > hc.Exchange.HighWater() {
		hc.Set(hcOver)
		if hc.remote != nil {
			hc.remote.st.SetOver()
		}
	}
	hc.flushLater()
}

// smallChunkWrite is the size from which a protocol's write into an empty queue gets a buffer
// of its own size (Conn.Write): a smaller one is a frame's header, which its payload follows
// into the same chunk.
const smallChunkWrite = 64

// flushLater has the connection's output written at the end of the loop's turn, once,
// whatever queued it.
func (hc *Conn) flushLater() {
	if !hc.Is(hcFlushed) {
		hc.Set(hcFlushed)
		l := hc.base().Loop
		l.toFlush = append(l.toFlush, hc)
	}
}

// flushHanded writes the output queued by handed-over connections during the turn.
func (l *Loop) flushHanded() {
	for i := 0; i < len(l.toFlush); i++ { // a flush may queue one more (Close from Drained)
		hc := l.toFlush[i]
		l.toFlush[i] = nil
		hc.clear(hcFlushed)
		if !hc.Is(hcClosed) && hc.base().Out.Size() > 0 {
			hc.Exchange.Flush()
		}
	}
	l.toFlush = l.toFlush[:0]
}

// Buffered returns how many bytes are queued and not yet taken by the client.
func (hc *Conn) Buffered() int { return int(hc.base().Out.Size()) }

// HighWater returns the output queued (Buffered) past which the protocol should wait for
// Drained: Options.WriteHighWater (a quarter of it, 16 KiB at least, on an HTTP/2 stream).
func (hc *Conn) HighWater() int { return int(hc.Exchange.HighWater()) }

// Close closes the connection once its queued output is written; Closed(c, nil) follows. A
// client still sending then has the rest of its input read and discarded for a moment, as
// after an HTTP response that closes (a close with unread input would reset the connection and
// could destroy the last output before the client reads it). It does nothing once the
// connection is closing or closed.
//
// A close of the protocol's own is the normal end of what the request handed over: if the
// handler that handed it over is still under way, its request ends without an error (Done.Err
// nil, as for a response that went out whole), unless SetErr said why the protocol closes.
func (hc *Conn) Close() {
	if hc.alive("Close") && !hc.Is(hcClosing) {
		hc.closeAfter(true)
	}
}

// CloseUnread is Close without the read that lingers after the output for a client still
// sending: for a client that broke the bounds of its protocol, whose flood is not worth two
// more seconds of reading. Its last output still goes first.
func (hc *Conn) CloseUnread() {
	if !hc.Is(hcClosed | hcClosing) {
		hc.closeAfter(false)
	}
}

// closeAfter closes the connection once its queued output is written, lingering (linger) for
// a client still sending.
func (hc *Conn) closeAfter(linger bool) {
	hc.reportEnd(nil) // unless SetErr reported an error first
	hc.Set(hcClosing)
	hc.Exchange.CloseAfterOutput(linger)
	if !hc.Is(hcClosed) {
		hc.flushLater()
	}
}

// Abort closes the connection at once, its queued output dropped and the client told by a
// reset: for a client that does not read, which would hold its output until the write timeout.
// Closed(c, nil) follows, before Abort returns. It does nothing once the connection is closed.
// The request that handed the connection over ends as after Close: say why with SetErr first.
func (hc *Conn) Abort() {
	if !hc.alive("Abort") {
		return
	}
	if !hc.Is(hcClosing) {
		hc.reportEnd(nil) // unless SetErr reported an error first
	}
	hc.Set(hcClosing)
	hc.base().Ending = CloseReset
	hc.Exchange.Close(nil)
}

// SetErr says why the protocol is ending the connection when that is not its normal end — a
// client that broke the protocol, stopped answering or does not read: call it just before
// Close or Abort. err becomes the Done.Err of the request that handed the connection over, if
// that request is still under way (an access log reports it), where a close of the protocol's
// own ends it without an error. The first end told counts: a connection that ended by itself
// first keeps its own error (ErrClosed when the client left, ErrTimeout, ErrShutdown,
// ErrInputFull), and a second SetErr changes nothing. Closed still reports nil after Close.
// The error is told to the request at once rather than kept in the Conn, whose size every idle
// connection pays for.
func (hc *Conn) SetErr(err error) {
	if hc.alive("SetErr") && err != nil && !hc.Is(hcClosing) {
		hc.reportEnd(err)
	}
}

// SetTimeout makes Timeout be called d from now, once; d <= 0 removes the timeout.
func (hc *Conn) SetTimeout(d time.Duration) {
	if hc.alive("SetTimeout") {
		hc.base().SetReadDeadline(d)
	}
}

// PauseReading stops reading the connection until ResumeReading: what the client sends waits in
// the kernel, and TCP's flow control holds the client back — a protocol whose client does not
// read its output need not read its input either. The socket's interest changes only if the
// client sends more meanwhile, so that a pause a protocol ends soon (a message handed to its
// reader) costs no system call.
func (hc *Conn) PauseReading() {
	if hc.alive("PauseReading") {
		hc.Set(HcPaused)
	}
}

// ResumeReading reads the connection again after PauseReading, giving the protocol first what
// it holds already.
func (hc *Conn) ResumeReading() {
	if hc.alive("ResumeReading") && hc.Is(HcPaused) {
		hc.clear(HcPaused | HcUnread)
		l := hc.base().Loop
		l.Pending = append(l.Pending, hc.Exchange)
		hc.Exchange.UpdateInterest()
	}
}

// Loop returns the connection's loop. It may be called from any goroutine.
func (hc *Conn) Loop() *Loop { return hc.base().Loop }

// RemoteAddr returns the client's address (the zero value once the connection is closed).
func (hc *Conn) RemoteAddr() netip.AddrPort {
	if !hc.alive("RemoteAddr") {
		return netip.AddrPort{}
	}
	return hc.Exchange.RemoteAddr()
}

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
	c.DropSpill(&c.Loop.Loop)
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
