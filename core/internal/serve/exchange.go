package serve

import (
	"crypto/tls"
	"net/netip"
	"time"

	"github.com/dwellhttp/dwell/core/internal/engine"
)

// An Exchange is what a request is served on, as its Ctx sees it: an HTTP/1.1 connection (a
// Socket as package http1 serves it) or an HTTP/2 stream (package http2). Each begins with a
// Carrier, the part they share — the request being served, the write queue, the deadlines, the
// state — which the Ctx reaches directly (Ctx.Carrier); what differs between them — how the
// body arrives, how the response head and trailers are framed, where the bytes go, how the
// exchange ends — the Ctx asks of the exchange (Ctx.Exchange).
type Exchange interface {
	Base() *Carrier

	// The request body.

	// ReadBody moves body bytes into p: what has arrived, or what the client sends next,
	// parking cx's handler until some does (then ErrReadAgain: read again). io.EOF after the
	// last byte; ErrReadBodyRefused where a continuation would have to park.
	ReadBody(cx *Ctx, p []byte) (int, error)
	// HasInput reports whether body bytes (or the body's end) have arrived that ReadBody would
	// return without waiting for the client.
	HasInput() bool
	// SendContinue answers Expect: 100-continue, unless the body has begun to arrive anyway.
	SendContinue()
	// WatchInput has the exchange watch for input while a handler waits for its body
	// (Seam.WaitBody).
	WatchInput()

	// The response.

	// WriteHead frames the response head ahead of the body held so far (whole: the handler
	// has returned, and the body is all there is).
	WriteHead(cx *Ctx, whole bool)
	// SendInterim sends an informational response (1xx) ahead of the final one.
	SendInterim(cx *Ctx, code int)
	// QueueTrailers frames the response's trailers to follow its body.
	QueueTrailers(cx *Ctx)
	// HighWater is the output the exchange holds before a writer parks.
	HighWater() int64
	// Sender carries the write queue's bytes to the client.
	Sender() engine.Sender
	// AfterSend goes on after bytes were (or were not) written: deadlines, a parked writer,
	// the close that waited for the output.
	AfterSend(progressed bool)
	// flush writes the queued output as far as the client takes it.
	Flush()
	// UpdateInterest says that output was queued without being written.
	UpdateInterest()
	// WaitWritable parks cx's handler until the client takes more output.
	WaitWritable(cx *Ctx) error

	// The end of the request, and of the exchange.

	// EndRequest ends the request once its handler (or continuation) has finished.
	EndRequest()
	// StartNext starts the request that follows the one just ended, if its head is complete
	// and the exchange may serve it now: its handler runs in the coroutine that ran the last
	// one's (Loop.chain). nil when there is none.
	StartNext() *Ctx
	// GoOn lets the exchange go on after a handler ran, or in the loop's pending list: with
	// the requests it holds, or a handed-over protocol's input; then its output is written.
	GoOn()
	// CloseAfterOutput ends the exchange once its queued output is written; linger says that
	// the client may still be sending.
	CloseAfterOutput(linger bool)
	// close ends the exchange at once: a handler still under way is woken with err.
	Close(err error)

	// What a request may ask of what carries it.

	RemoteAddr() netip.AddrPort
	TLSState() *tls.ConnectionState
	Proto() string           // Ctx.Proto
	ConnectProtocol() string // Seam.ConnectProtocol
	// HandOver hands the exchange over to p: a Protocol, or one given through core (Face).
	HandOver(cx *Ctx, p any) (*Conn, error)
}

// A Carrier is what an exchange has whatever its protocol. Its timer comes first, and a
// Carrier comes first in each exchange, so that the exchange's timer is its own (see timer).
type Carrier struct {
	Timer             timer // first: see timer
	Serial            uint32
	State             connState
	PeerEOF           bool     // the client has shut down its side
	HeldBack          bool     // input waits until the client reads its output (http1's conn.serve, onReadable)
	Ending            closeHow // how the exchange closes once its output is written
	Loop              *Loop
	Ctx               *Ctx  // the request being served, or nil
	ReadDeadline, wdl int64 // read-side and write-side deadlines on the loop clock; 0 means none
	Out               engine.WriteQueue
}

// SetReadDeadline sets the read-side deadline d from now (none when d is 0).
func (c *Carrier) SetReadDeadline(d time.Duration) {
	if d <= 0 {
		c.ReadDeadline = 0
		return
	}
	c.ReadDeadline = c.Loop.Clk.Now + int64(d)
	c.armTimer(c.ReadDeadline)
}

// ArmWriteDeadline starts the write timeout, unless it is already counting: it runs while
// output waits for the client (queued, or a handler parked on its own buffer).
func (c *Carrier) ArmWriteDeadline() {
	if c.wdl == 0 && c.Loop.Opts.WriteTimeout > 0 {
		c.wdl = c.Loop.Clk.Now + int64(c.Loop.Opts.WriteTimeout)
		c.armTimer(c.wdl)
	}
}

// armTimer makes sure the exchange's timer fires no later than when. A timer already due
// earlier is left alone and re-armed when it fires (deadlineDue): moving a deadline later, as
// every keep-alive request does, costs no heap operation.
func (c *Carrier) armTimer(when int64) {
	if !c.Timer.Armed() || c.Timer.When() > when {
		c.Loop.Timers.Set(&c.Timer, when)
	}
}

// Rearm sets the exchange's timer for the earlier of its deadlines still to come.
func (c *Carrier) Rearm() {
	next := c.ReadDeadline
	if c.wdl != 0 && (next == 0 || c.wdl < next) {
		next = c.wdl
	}
	if next != 0 {
		c.Loop.Timers.Set(&c.Timer, next)
	}
}

// Sent does what follows a write of c's queue, for both protocols: a writer parked for room is
// woken; the write timeout restarts with progress and stops once the queue is empty. It reports
// whether an exchange held back for its unread output goes on, the client having taken half of
// its high-water mark hw (goOn: the caller puts it in the loop's pending list), and whether the
// exchange, closing, has written the last of its output and is to close now.
func (c *Carrier) Sent(hw int64, progressed bool) (goOn, closeNow bool) {
	if c.HeldBack && c.Out.Size() <= hw/2 {
		c.HeldBack = false
		goOn = true
	}
	cx := c.Ctx
	writer := cx != nil && cx.ParkedOn(ParkWrite)
	if c.Out.Size() == 0 {
		c.wdl = 0
		if writer {
			cx.Wake(nil)
		}
		return goOn, c.State == StClosing
	}
	// Progress-based write timeout: it restarts whenever the client takes some bytes.
	if progressed {
		c.wdl = 0
	}
	c.ArmWriteDeadline()
	if writer && c.Out.Size() <= hw/2 && !c.Out.HasFile() {
		cx.Wake(nil)
	}
	return goOn, false
}

// DropCtx gives the request's Ctx back to the loop, reporting whether there was one.
func (c *Carrier) DropCtx() bool {
	cx := c.Ctx
	if cx == nil {
		return false
	}
	c.Ctx = nil
	cx.Body.end(c.Loop)
	c.Loop.PutCtx(cx)
	return true
}

// WakeOnClose ends the request of an exchange that has closed: a handler still running or
// parked is woken with err (ErrClosed when nil) and finishes on its own; a finished one's Ctx
// goes back to the loop, and WakeOnClose reports that it did.
func (c *Carrier) WakeOnClose(err error) bool {
	cx := c.Ctx
	switch {
	case cx == nil:
		return false
	case cx.State == CtxIdle:
		return c.DropCtx() // draining: the handler is done
	}
	if err == nil {
		err = ErrClosed
	}
	cx.clientGone(err)
	return false
}

// A dueKind is which of an exchange's deadlines has passed.
type dueKind uint8

const (
	dueNone dueKind = iota
	DueWrite
	DueRead
)

// due reports which of c's deadlines has passed at now, the write-side one first; a read-side
// one is cleared as it is reported.
func (c *Carrier) Due(now int64) dueKind {
	switch {
	case c.wdl != 0 && c.wdl <= now:
		return DueWrite
	case c.ReadDeadline != 0 && c.ReadDeadline <= now:
		c.ReadDeadline = 0
		return DueRead
	}
	return dueNone
}

// WriteTimedOut closes ex, whose output made no progress for Options.WriteTimeout.
func (c *Carrier) WriteTimedOut(ex Exchange) {
	if l := c.Loop; l.DebugEnabled() {
		l.Log.Debug("dwell: write timeout", "remote", ex.RemoteAddr())
	}
	ex.Close(ErrTimeout)
}

// ReadTimedOut wakes a handler waiting for its body, which made no progress for
// Options.BodyTimeout.
func (c *Carrier) ReadTimedOut() {
	if cx := c.Ctx; cx.ParkedOn(ParkRead) || cx.ParkedOn(ParkBody) {
		cx.Wake(ErrTimeout)
	}
}

// BodyGone returns why no more of cx's body can be read, whatever the protocol: the exchange
// has closed (the client left, or the grace period ended), or the request's deadline passed.
func (c *Carrier) BodyGone(cx *Ctx) error {
	switch {
	case c.State == StClosed && cx.Gone != 0:
		return cx.Gone.err()
	case c.State == StClosed:
		return ErrClosed
	case cx.Gone.err() == ErrDeadline:
		return ErrDeadline
	}
	return nil
}

// AwaitInput parks the handler cx until body bytes arrive, with the progress-based body timeout.
func (c *Carrier) AwaitInput(cx *Ctx) error {
	if t := c.Loop.Opts.BodyTimeout; t > 0 {
		c.SetReadDeadline(t)
	}
	err := cx.ParkOnConn(ParkRead)
	c.ReadDeadline = 0
	return err
}
