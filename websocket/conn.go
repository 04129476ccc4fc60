package websocket

import (
	"errors"
	"fmt"
	"net/netip"
	"sync/atomic"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/internal/bufpool"
	"github.com/dwellhttp/dwell/websocket/internal/frame"
	"github.com/dwellhttp/dwell/websocket/internal/utf8check"
)

// A MessageType is a data message's kind: Text (UTF-8, checked) or Binary.
type MessageType uint8

const (
	Text   = MessageType(frame.Text)
	Binary = MessageType(frame.Binary)
)

func (t MessageType) String() string {
	switch t {
	case Text:
		return "text"
	case Binary:
		return "binary"
	}
	return fmt.Sprintf("MessageType(%d)", uint8(t))
}

// Close codes (RFC 6455 §7.4.1) a Conn sends, and a CloseError carries.
const (
	CloseNormal          = frame.CloseNormal
	CloseGoingAway       = frame.CloseGoingAway
	CloseProtocolError   = frame.CloseProtocolError
	CloseUnsupportedData = frame.CloseUnsupportedData
	CloseNoStatus        = frame.CloseNoStatus
	CloseAbnormal        = frame.CloseAbnormal
	CloseInvalidPayload  = frame.CloseInvalidPayload
	ClosePolicyViolation = frame.ClosePolicyViolation
	CloseMessageTooBig   = frame.CloseMessageTooBig
	CloseInternalError   = frame.CloseInternalError
)

// A CloseError is how a connection ended with a close frame: the client's (Remote) or this
// side's, with its code and reason. A connection closed without a close frame (the client
// vanished, a ping unanswered) ends with another error: core.ErrClosed, ErrPongTimeout.
type CloseError struct {
	Code   uint16
	Reason string
	Remote bool // the client sent the close frame
}

func (e *CloseError) Error() string {
	who := "server"
	if e.Remote {
		who = "client"
	}
	if e.Reason == "" {
		return fmt.Sprintf("websocket: closed by the %s with %d", who, e.Code)
	}
	return fmt.Sprintf("websocket: closed by the %s with %d: %s", who, e.Code, e.Reason)
}

// Errors of a Conn.
var (
	// ErrPongTimeout ends a connection whose client did not answer a ping within
	// Options.PongTimeout.
	ErrPongTimeout = errors.New("websocket: the client did not answer a ping")
	// ErrClosed is returned by the calls made after the connection closed, or started to. It
	// is core.ErrClosed, so one errors.Is answers for an HTTP request and a WebSocket alike.
	ErrClosed = core.ErrClosed
	// errEventStyle is what the sequential reads return on a connection of the event style,
	// whose messages go to Events.Message.
	errEventStyle = errors.New("websocket: ReadMessage on a connection made by Serve, whose messages go to Events.Message")
	// errCannotWait is what the sequential reads return where nothing can wait: in Events'
	// functions, a Loop.Post callback, a handler other than the connection's own.
	errCannotWait = errors.New("websocket: ReadMessage on the loop outside the connection's handler, where it cannot wait")
)

// The bits of Conn.pub.
const (
	pubClosed = 1 << iota // the connection takes no more messages: it is closing or closed
	pubOver               // its output is over the high-water mark
)

// setState moves the connection to state s, which is past stateOpen, and tells other
// goroutines so.
func (c *Conn) setState(s uint8) {
	c.state = s
	c.pub.Or(pubClosed)
}

// Connection states.
const (
	stateOpen    uint8 = iota
	stateClosing       // this side sent its close frame: the client's is awaited
	stateDone          // the close handshake is over, or the connection failed: TCP is closing
	stateClosed        // Closed has been called
)

// A Conn is a WebSocket connection on a dwell loop, and the loop's: its methods are for code
// the loop runs — the handler that upgraded, Events' functions, a continuation, a Loop.Post
// callback or timer of its loop — and panic, saying so, when another goroutine calls them
// (Subprotocol, Compressed and Loop, fixed at the upgrade, excepted). What an application
// hands to its goroutines is the connection's Remote, whose every call posts to the loop.
type Conn struct {
	hc  *core.Conn
	o   *Options
	ev  *Events  // the event style's callbacks; nil for Accept's connections
	seq *seqSide // the sequential style's (Accept's); nil for the event style's

	// The frame being received.
	left    int64   // payload bytes still to come
	key     [4]byte // its mask
	pos     uint8   // the mask's position
	op      frame.Opcode
	fin     bool
	inFrame bool

	// The message being received.
	msgOp    frame.Opcode // Text or Binary; 0 between messages
	deflated bool         // its first frame had RSV1: it is compressed
	ready    bool         // sequential style: a whole message waits in msg for its reader
	utf8     utf8check.Validator
	msg      []byte // what of it has come, when it does not fit one read (from the buffer pool)

	state      uint8
	sub        int8 // the subprotocol's index in Options.Subprotocols, -1 for none
	awaitPong  bool // a ping is out; timerAt is its pong's deadline
	pongGrace  bool // the pong's deadline was moved once, for an unread message (timers.go)
	readerWait bool // the handler is parked in a read
	writerWait bool // the handler is parked in a write, for Drained
	inEvent    bool // one of Events' functions runs: a close meanwhile waits for it (event)
	// pub is what a Remote's Send and SendPrepared see of the connection without waiting for
	// its loop (pubClosed, pubOver); the loop keeps it up to date.
	pub atomic.Uint32
	// msgSince is when the message in progress began, for Options.MessageTimeout: whole
	// seconds since the process started, plus one (0: none), in the room the fields above
	// leave before timerAt's alignment — a connection is 128 bytes, and one more field would
	// make it the allocator's next class, 144.
	msgSince int32
	timerAt  int64
	lastIn   int64 // when the client last sent something, for IdleTimeout

	flate *flateState // permessage-deflate, when negotiated
	rare  *connRare   // what few connections need
}

// seqSide is what the sequential style adds to a connection: the request through which its
// handler parks on the connection, and the Waker of that park. The request stays after its
// handler returns, when the Ctx is another request's: then MayPark is false for every caller
// but that request's handler, which alone may park through it.
type seqSide struct {
	cx *core.Ctx
	wk core.Waker // the handler's park in a read or a write (readerWait, writerWait)
}

// park parks the handler in Hold, woken by wake.
func (s *seqSide) park() {
	s.wk = s.cx.Waker()
	s.cx.Seam().Hold() // what ends it is the connection's state, which the caller reads again
}

// wake ends the handler's park, on the loop.
func (s *seqSide) wake() { s.cx.Seam().Loop().Wake(s.wk, nil) }

// connRare holds what only some connections need: a Remote and its waiting reads, the
// error the connection ended with, a message being written in pieces.
type connRare struct {
	err     error
	readers []chan readResult // goroutines waiting in a Remote's ReadMessage, oldest first
	reader  *messageReader    // NextReader's, once it has been called
	remote  *Remote           // the goroutine side, once Remote has been called
}

func (c *Conn) rareState() *connRare {
	if c.rare == nil {
		c.rare = &connRare{}
	}
	return c.rare
}

// Subprotocol returns the subprotocol chosen at the upgrade, "" for none.
func (c *Conn) Subprotocol() string {
	if c.sub < 0 {
		return ""
	}
	return c.o.Subprotocols[c.sub]
}

// Compressed reports whether permessage-deflate was negotiated.
func (c *Conn) Compressed() bool { return c.flate != nil }

// Loop returns the connection's loop.
func (c *Conn) Loop() *core.Loop { return c.hc.Loop() }

// RemoteAddr returns the client's address (the zero value once the connection has closed).
func (c *Conn) RemoteAddr() netip.AddrPort {
	c.hc.MustBeOnLoop("websocket.Conn.RemoteAddr", goroutinesUseRemote)
	return c.hc.RemoteAddr()
}

// Err returns why the connection closed, nil while it is open.
func (c *Conn) Err() error {
	c.hc.MustBeOnLoop("websocket.Conn.Err", goroutinesUseRemote)
	return c.closeErr()
}

// goroutinesUseRemote ends the panic of a call of a Conn's method off its loop.
const goroutinesUseRemote = "goroutines use the connection's Remote (Conn.Remote)"

func (c *Conn) closeErr() error {
	if c.rare != nil && c.rare.err != nil {
		return c.rare.err
	}
	if c.state != stateOpen {
		return ErrClosed
	}
	return nil
}

// setErr records why the connection ends, once.
func (c *Conn) setErr(err error) {
	if r := c.rareState(); r.err == nil {
		r.err = err
	}
}

// receive takes the client's bytes: frames are read and checked as they come, control frames
// answered, and messages handed on — to Events.Message, or to the sequential reader. It is the
// core.Protocol's Receive, on the loop.
func (c *Conn) receive(hc *core.Conn, in []byte) int {
	used := 0
	// Each ping is answered at once while the client takes what it is sent. Once it leaves
	// output unread, a pong not sent yet is owed: pings that come one after another are then
	// answered once, the latest alone (RFC 6455 §5.5.3 allows it), before whatever follows
	// them. A client that floods pings and does not read so gets a pong per read of its input,
	// and no read at all once the output is over the high-water mark (core holds the
	// connection's input back).
	backed := hc.Buffered() > 0
	var ping []byte
	pinged := false
	for c.state < stateDone && !c.ready {
		if !c.inFrame {
			if used == len(in) {
				break
			}
			h, n, err := frame.Parse(in[used:])
			if err != nil {
				c.fail(CloseProtocolError, err.Error())
				return len(in)
			}
			if n == 0 {
				break // the rest of the header is to come
			}
			if pinged && h.Opcode != frame.Ping {
				c.pong(ping) // before what follows the pings, so that no answer is overtaken
				pinged = false
				if c.state >= stateDone {
					return len(in) // the slow-client policy closed the connection
				}
			}
			if !c.admit(&h) {
				return len(in)
			}
			if h.Opcode.IsControl() {
				end := used + n + int(h.Length)
				if end > len(in) {
					break // a control frame is handled whole (at most 125 bytes): wait for it
				}
				payload := in[used+n : end]
				frame.Mask(h.Key, 0, payload)
				used = end
				switch {
				case h.Opcode == frame.Ping && backed:
					ping, pinged = payload, true
				case h.Opcode == frame.Ping:
					if c.pong(payload); c.state >= stateDone {
						return len(in) // the slow-client policy closed the connection
					}
				default:
					c.control(h.Opcode, payload)
				}
				continue
			}
			used += n
			c.inFrame, c.left, c.key, c.pos, c.op, c.fin = true, h.Length, h.Key, 0, h.Opcode, h.Fin
		}
		k := int(min(int64(len(in)-used), c.left))
		if k == 0 && c.left > 0 {
			break // the payload is to come
		}
		p := in[used : used+k]
		c.pos = uint8(frame.Mask(c.key, int(c.pos), p))
		used += k
		c.left -= int64(k)
		if !c.payload(p) {
			return len(in)
		}
		if c.left == 0 {
			c.inFrame = false
			if c.fin && !c.endMessage() {
				return len(in)
			}
		}
	}
	if c.state >= stateDone {
		return len(in) // whatever follows a close or a failure is not read
	}
	if pinged {
		c.pong(ping)
	}
	if c.msgOp != 0 && !c.ready && c.msgSince == 0 && c.o.messageTimeout() > 0 {
		c.msgSince = sinceStart()
		c.schedule()
	}
	return used
}

// pong answers a ping, as the data the connection sends without waiting are: within
// Options.MaxQueued, past which the slow-client policy applies.
func (c *Conn) pong(payload []byte) {
	if c.state == stateOpen {
		c.queue(frame.Pong, payload, false, true)
	}
}

// admit checks a frame's header against what RFC 6455 requires of a client's frames, and
// against the message in progress; it fails the connection and reports false when the frame
// breaks a rule.
func (c *Conn) admit(h *frame.Header) bool {
	switch {
	case !h.Masked:
		return c.fail(CloseProtocolError, "the client's frames must be masked") // §5.1
	case h.RSV2 || h.RSV3:
		return c.fail(CloseProtocolError, "a reserved bit is set") // §5.2: no extension defines it
	case h.RSV1 && (c.flate == nil || h.Opcode.IsControl() || h.Opcode == frame.Continuation):
		// RFC 7692 §6: RSV1 marks a compressed message, on its first frame only.
		return c.fail(CloseProtocolError, "RSV1 is set where no compression allows it")
	case h.Opcode.IsControl():
		return true // Parse checked the rest: final, at most 125 bytes
	case h.Opcode == frame.Continuation && c.msgOp == 0:
		return c.fail(CloseProtocolError, "a continuation frame without a message to continue") // §5.4
	case h.Opcode != frame.Continuation && c.msgOp != 0:
		return c.fail(CloseProtocolError, "a new message before the last one ended") // §5.4
	}
	if h.Opcode != frame.Continuation {
		c.msgOp, c.deflated = h.Opcode, h.RSV1
		c.utf8.Reset()
	}
	if int64(len(c.msg))+h.Length > c.o.maxMessage() {
		return c.fail(CloseMessageTooBig, "message over the limit")
	}
	return true
}

// payload takes one piece of a data frame's payload, unmasked.
func (c *Conn) payload(p []byte) bool {
	if c.msgOp == frame.Text && !c.deflated && !c.utf8.Feed(p) {
		return c.fail(CloseInvalidPayload, "text that is not UTF-8") // §8.1: at once
	}
	if c.ev != nil && c.msg == nil && c.fin && c.left == 0 && !c.deflated && c.msgOp == c.op {
		// A message in one frame, whole in this read: handed on as it is, with no copy.
		if c.msgOp == frame.Text && !c.utf8.Complete() {
			return c.fail(CloseInvalidPayload, "text that ends inside a character")
		}
		return c.deliver(p)
	}
	if len(p) > 0 || c.msg == nil {
		return c.gather(p)
	}
	return true
}

// endMessage ends a message whose last frame has come whole.
func (c *Conn) endMessage() bool {
	if c.msgOp == 0 {
		return true // handed on from payload already
	}
	c.endGather()
	data := c.msg
	if c.deflated {
		out, err := c.flate.inflate(data, c.o.maxMessage())
		bufpool.Put(data)
		c.msg = nil
		if err != nil {
			if errors.Is(err, errTooLarge) {
				return c.fail(CloseMessageTooBig, "message over the limit")
			}
			return c.fail(CloseInvalidPayload, "the message does not inflate: "+err.Error())
		}
		if c.msgOp == frame.Text && !(c.utf8.Feed(out) && c.utf8.Complete()) {
			bufpool.Put(out)
			return c.fail(CloseInvalidPayload, "text that is not UTF-8")
		}
		c.msg, data = out, out
	} else if c.msgOp == frame.Text && !c.utf8.Complete() {
		return c.fail(CloseInvalidPayload, "text that ends inside a character")
	}
	return c.deliver(data)
}

// deliver hands a whole message on: to Events.Message, which borrows it for the call, or to the
// sequential reader, which takes it (the connection reads no more until it has).
func (c *Conn) deliver(data []byte) bool {
	c.msgSince = 0 // whole: Options.MessageTimeout no longer runs for it
	if c.o.idleTimeout() > 0 {
		c.lastIn = now()
	}
	if c.ev == nil {
		if c.msg == nil {
			c.msg = appendBuf(nil, data) // data is the read's, borrowed: the reader keeps a copy
		}
		c.ready = true // msgOp stays the message's type until a reader takes it
		c.hc.PauseReading()
		c.wakeReader()
		return true
	}
	typ := MessageType(c.msgOp)
	c.msgOp = 0
	if c.ev.Message != nil {
		c.inEvent = true // data, c.msg's or the read's, is lent for the call, even if a Send closes
		c.ev.Message(c, typ, data)
		c.inEvent = false
	}
	if c.msg == nil {
		bufpool.Poison(data) // the read's own bytes, lent for the call (in builds with the race detector)
	}
	bufpool.Put(c.msg)
	c.msg = nil
	if c.state == stateClosed {
		c.release() // the connection closed while Message ran
	}
	return c.state < stateDone
}

// event runs one of Events' functions (but Message, which deliver runs so), after which the
// close that a Send in it may have made (CloseSlowClient) ends: Events.Close runs after the
// function, not inside it, since the functions run one at a time.
func (c *Conn) event(f func()) {
	c.inEvent = true
	f()
	c.inEvent = false
	if c.state == stateClosed {
		c.release()
	}
}

// control takes a control frame (§5.5) other than a ping (Receive answers those): a close is
// answered with the close handshake; a pong is the answer awaited.
func (c *Conn) control(op frame.Opcode, payload []byte) {
	switch op {
	case frame.Pong:
		c.ponged()
	case frame.Close:
		code, reason, err := frame.ParseClose(payload)
		if err != nil {
			code := uint16(CloseProtocolError)
			if errors.Is(err, frame.ErrCloseReason) {
				code = CloseInvalidPayload
			}
			c.fail(code, err.Error())
			return
		}
		reported := code
		if code == 0 {
			reported = CloseNoStatus // §7.1.5: a close frame without a code
		}
		c.setErr(&CloseError{Code: reported, Reason: string(reason), Remote: true})
		if c.state == stateOpen {
			// §5.5.1: answer with a close frame, echoing the code, then close the connection.
			var b [2]byte
			echo := b[:0]
			if code != 0 {
				echo = frame.AppendClose(echo, code, "")
			}
			c.writeFrame(frame.Close, echo, true, false)
		}
		c.end(nil)
	}
}

// fail fails the connection (§7.1.7): a close frame with code says why, and the TCP connection
// closes after it, the client's answer not awaited. It reports false, for the callers' returns.
func (c *Conn) fail(code uint16, reason string) bool {
	if c.state == stateOpen {
		var b [125]byte
		c.writeFrame(frame.Close, frame.AppendClose(b[:0], code, reason), true, false)
	}
	c.setErr(&CloseError{Code: code, Reason: reason})
	c.endGather()
	bufpool.Put(c.msg)
	c.msg = nil
	c.end(nil)
	return false
}

// drained is the core.Protocol's Drained: the output has drained after a slow client.
func (c *Conn) drained() {
	c.pub.And(^uint32(pubOver))
	c.wakeWriters()
	if c.ev != nil && c.ev.Drained != nil && c.state == stateOpen {
		c.event(func() { c.ev.Drained(c) })
	}
}

// shutdown is the core.Protocol's Shutdown: the server is shutting down: the close handshake
// begins with 1001.
func (c *Conn) shutdown() { c.startClose(CloseGoingAway, "server shutting down") }

// closed is the core.Protocol's Closed: the connection is gone. Inside one of Events'
// functions (a Send there closed it) the rest waits for the function to return (event).
func (c *Conn) closed(err error) {
	if err != nil {
		c.setErr(err)
	} else {
		c.setErr(ErrClosed)
	}
	c.setState(stateClosed)
	if !c.inEvent {
		c.release()
	}
}

// release lets go of what the closed connection holds — but a whole message waiting for its
// reader, which ReadMessage still returns before the error — wakes its readers and writers,
// and calls Events.Close.
func (c *Conn) release() {
	c.endGather()
	if !c.ready {
		bufpool.Put(c.msg)
		c.msg = nil
	}
	c.flate.release()
	c.wakeReader()
	c.wakeWriters()
	if c.ev != nil && c.ev.Close != nil {
		c.ev.Close(c, c.rare.err)
	}
}

// wakeReader wakes the handler or the goroutines waiting for a message.
func (c *Conn) wakeReader() {
	if c.readerWait {
		c.readerWait = false
		c.seq.wake()
	}
	if c.rare != nil && len(c.rare.readers) > 0 {
		c.serveReaders()
	}
}

// wakeWriters wakes the handler waiting for the output to drain; goroutines waiting for it wait
// in the connection's core.Remote, which core wakes.
func (c *Conn) wakeWriters() {
	if c.writerWait {
		c.writerWait = false
		c.seq.wake()
	}
}
