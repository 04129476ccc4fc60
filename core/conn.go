package core

import (
	"crypto/tls"
	"net/netip"
	"time"

	"github.com/dwellhttp/dwell/core/internal/serve"
	"github.com/dwellhttp/dwell/internal/alias"
)

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

// A Conn is a connection handed over from HTTP to a Protocol (Ctx.HandOver). Its methods must be
// called on its loop — from the Protocol's own methods, a handler or continuation of that loop,
// a Loop.Post callback — and the output they queue leaves at the end of the loop's turn.
type Conn struct{ x serve.Conn }

// A Remote is the goroutine side of a handed-over connection: Do runs code on its loop with its
// Conn and waits for it, and WaitDrained waits while the connection's output is past its
// high-water mark, as a write from a goroutine should before it writes more. Posts run in the
// order they were made, so what one goroutine asks is done in its order. Its methods are for
// goroutines of the application's: code that runs on a loop, which cannot wait, has the Conn.
type Remote struct{ x serve.Remote }

// Write queues a copy of p for the client. It never blocks: the bytes wait in the connection's
// queue until the socket takes them, and Buffered says how many wait. Past the high-water mark
// (Options.WriteHighWater) the connection is not read until its output has drained to half of
// it, so that what a protocol writes in answer to its input stays within the mark and the
// answer to one read (at most the loop's read buffer, 64 KiB, of input); what it writes of its
// own accord (a broadcast) it should stop writing until Drained, or drop the client: the
// queue is not bounded otherwise. It returns ErrClosed once the connection has closed.
func (hc *Conn) Write(p []byte) error {
	return hc.x.Write(p)
}

// Buffered returns how many bytes are queued and not yet taken by the client.
func (hc *Conn) Buffered() int {
	return hc.x.Buffered()
}

// HighWater returns the output queued (Buffered) past which the protocol should wait for
// Drained: Options.WriteHighWater (a quarter of it, 16 KiB at least, on an HTTP/2 stream).
func (hc *Conn) HighWater() int {
	return hc.x.HighWater()
}

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
	hc.x.Close()
}

// Abort closes the connection at once, its queued output dropped and the client told by a
// reset: for a client that does not read, which would hold its output until the write timeout.
// Closed(c, nil) follows, before Abort returns. It does nothing once the connection is closed.
// The request that handed the connection over ends as after Close: say why with SetErr first.
func (hc *Conn) Abort() {
	hc.x.Abort()
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
	hc.x.SetErr(err)
}

// SetTimeout makes Timeout be called d from now, once; d <= 0 removes the timeout.
func (hc *Conn) SetTimeout(d time.Duration) {
	hc.x.SetTimeout(d)
}

// PauseReading stops reading the connection until ResumeReading: what the client sends waits in
// the kernel, and TCP's flow control holds the client back — a protocol whose client does not
// read its output need not read its input either. The socket's interest changes only if the
// client sends more meanwhile, so that a pause a protocol ends soon (a message handed to its
// reader) costs no system call.
func (hc *Conn) PauseReading() {
	hc.x.PauseReading()
}

// ResumeReading reads the connection again after PauseReading, giving the protocol first what
// it holds already.
func (hc *Conn) ResumeReading() {
	hc.x.ResumeReading()
}

// Loop returns the connection's loop. It may be called from any goroutine.
func (hc *Conn) Loop() *Loop {
	return alias.As[*Loop](hc.x.Loop())
}

// RemoteAddr returns the client's address (the zero value once the connection is closed).
func (hc *Conn) RemoteAddr() netip.AddrPort {
	return hc.x.RemoteAddr()
}

// MustBeOnLoop panics, naming op, unless the code running is the connection's loop's: a handler
// or continuation of its loop, a Protocol's call, a Post callback or timer there. A protocol
// built on the Conn calls it first in its own methods that are the loop's, so that a goroutine
// calling one is told which, and what to use instead (elsewhere, such as "goroutines use
// Conn.Remote"; "" for nothing), before anything is touched. It costs a few nanoseconds.
func (hc *Conn) MustBeOnLoop(op, elsewhere string) {
	hc.x.MustBeOnLoop(op, elsewhere)
}

// Remote returns the goroutine side of hc, the same one each time. Call it on hc's loop.
func (hc *Conn) Remote() *Remote {
	return alias.As[*Remote](hc.x.Remote())
}

// TLS returns the TLS state of the connection, as Ctx.TLS does, or nil over plaintext.
// Call it on the connection's loop.
func (hc *Conn) TLS() *tls.ConnectionState {
	return hc.x.TLS()
}

// Do runs f with the connection's Conn on its loop, after what was posted to the loop before,
// and waits for it to have run. It returns ErrClosed, without running f, once the connection
// has closed. Code that runs on a loop must not call it (it panics there): it would wait for
// itself, or hold up its own loop; it uses the Conn, or posts (Loop.Post).
func (r *Remote) Do(f func(hc *Conn)) error {
	return r.x.Do(alias.As[func(hc *serve.Conn)](f))
}

// Post runs f on the connection's loop, after what was posted to the loop before, without
// waiting for it: f reaches the connection through what its protocol keeps (the Conn it was
// handed, its own state). f runs even once the connection has closed (the Conn's methods then
// report it, Write refusing), so that a protocol can still answer its goroutines from what it
// kept. It returns ErrShutdown, without running f, when the loop has stopped. Code that runs on
// the connection's loop must not call it (it panics there): it has the Conn. f is posted as it
// is, so a post costs what f's closure costs and nothing more.
func (r *Remote) Post(f func()) error {
	return r.x.Post(f)
}

// WaitDrained waits while the connection's output is past its high-water mark, until the client
// has taken enough of it (Protocol.Drained) or the connection closes; it returns nil, or once
// closed ErrClosed. Code that runs on a loop must not call it (it panics there).
func (r *Remote) WaitDrained() error {
	return r.x.WaitDrained()
}

// face calls the Protocol an application handed a connection to: serve holds it as it was
// given (serve.Face), and it is called with the Conn as the application knows it.
type face struct{}

func init() { serve.SetFace(face{}) }

func (face) Receive(p any, c *serve.Conn, in []byte) int {
	return p.(Protocol).Receive(alias.As[*Conn](c), in)
}
func (face) Drained(p any, c *serve.Conn)  { p.(Protocol).Drained(alias.As[*Conn](c)) }
func (face) Timeout(p any, c *serve.Conn)  { p.(Protocol).Timeout(alias.As[*Conn](c)) }
func (face) Shutdown(p any, c *serve.Conn) { p.(Protocol).Shutdown(alias.As[*Conn](c)) }
func (face) Closed(p any, c *serve.Conn, err error) {
	p.(Protocol).Closed(alias.As[*Conn](c), err)
}
