package websocket

import (
	"errors"

	"github.com/dwellhttp/dwell/internal/bufpool"
	"github.com/dwellhttp/dwell/websocket/internal/frame"
)

// A SendResult says what Send did with a message.
type SendResult uint8

const (
	// SendQueued: the message is queued for the client.
	SendQueued SendResult = iota
	// SendBackpressure: the message is queued, and the connection's output is now past the
	// server's high-water mark (core.Options.WriteHighWater): the client is slow, and the
	// sender should hold back until it catches up.
	SendBackpressure
	// SendDropped: the message was not queued, by the slow-client policy (Options.SlowClient):
	// queueing it would have put more than Options.MaxQueued bytes in the connection's output.
	// With CloseSlowClient the connection is then closed at once, its output dropped (a client
	// that does not read would not read a close frame either), and ends with a *CloseError of
	// 1008.
	SendDropped
	// SendClosed: the connection is closed, or closing; the message was not queued.
	SendClosed
)

func (r SendResult) String() string {
	switch r {
	case SendQueued:
		return "queued"
	case SendBackpressure:
		return "backpressure"
	case SendDropped:
		return "dropped"
	case SendClosed:
		return "closed"
	}
	return "SendResult(?)"
}

var (
	errBadType        = errors.New("websocket: a message is Text or Binary")
	errBadCloseCode   = errors.New("websocket: a close code a server may not send")
	errCloseReasonLen = errors.New("websocket: a close reason over 123 bytes, or not UTF-8")
)

// Send queues a message for the client and says what became of it at once: it never waits. It
// is the event style's write (Events' functions call it), and any code of the connection's
// loop may call it: queued (SendQueued), queued past the high-water mark, the sender told to
// hold back (SendBackpressure), refused by the slow-client policy (SendDropped), or too late
// (SendClosed). The type must be Text or Binary; a Text message is sent as it is, its UTF-8
// the caller's to ensure. Goroutines, another loop's code among them, send with the Remote's
// Send.
func (c *Conn) Send(typ MessageType, data []byte) SendResult {
	if typ != Text && typ != Binary {
		panic(errBadType)
	}
	c.hc.MustBeOnLoop("websocket.Conn.Send", goroutinesUseRemote)
	return c.send(typ, data, true)
}

// send queues a data message on the loop, compressed when that was negotiated and it is long
// enough to gain from it. bounded applies the slow-client policy: for the writes whose caller
// does not wait for the output to drain.
func (c *Conn) send(typ MessageType, data []byte, bounded bool) SendResult {
	if c.state != stateOpen {
		return SendClosed
	}
	if c.flate != nil && len(data) >= c.o.compressMin() {
		z := c.flate.deflate(data)
		r := c.queue(frame.Opcode(typ), z, true, bounded)
		bufpool.Put(z)
		return r
	}
	return c.queue(frame.Opcode(typ), data, false, bounded)
}

// queue writes one final data frame, unless (bounded) the slow-client policy refuses it.
func (c *Conn) queue(op frame.Opcode, payload []byte, compressed, bounded bool) SendResult {
	if bounded && c.hc.Buffered()+len(payload)+frame.MaxHeaderSize > c.o.maxQueued() {
		if c.o.SlowClient == CloseSlowClient {
			c.dropSlow()
		}
		return SendDropped
	}
	c.writeFrame(op, payload, true, compressed)
	return c.queued()
}

// queued reports how a message just queued stands: SendBackpressure over the high-water mark,
// which the Remote's sends see too (pubOver) until Drained, else SendQueued.
func (c *Conn) queued() SendResult {
	if c.hc.Buffered() > c.hc.HighWater() {
		if c.pub.Load()&pubOver == 0 {
			c.pub.Or(pubOver) // until Drained
		}
		return SendBackpressure
	}
	return SendQueued
}

// dropSlow ends the connection of a client that does not read its messages, at once: a close
// frame would wait behind the output the client is not reading, holding it until the write
// timeout.
func (c *Conn) dropSlow() {
	c.setErr(&CloseError{Code: ClosePolicyViolation, Reason: "the client does not read its messages"})
	c.hc.SetErr(c.closeErr()) // for the request that upgraded: not a normal end
	c.setState(stateDone)
	c.hc.Abort()
}

// writeFrame queues one frame. A server's frames are not masked (RFC 6455 §5.1). A small frame
// is written whole, in one write, so that it takes one buffer of its size in the output
// (core.Conn.Write); a larger one's payload follows its header into the same chunk.
func (c *Conn) writeFrame(op frame.Opcode, payload []byte, fin, rsv1 bool) {
	var b [frame.MaxHeaderSize + smallFrame]byte
	h := frame.AppendHeader(b[:0], frame.Header{Fin: fin, RSV1: rsv1, Opcode: op, Length: int64(len(payload))})
	if len(payload) <= smallFrame {
		c.hc.Write(append(h, payload...))
		return
	}
	if c.hc.Write(h) == nil {
		c.hc.Write(payload)
	}
}

// smallFrame is the largest payload writeFrame writes with its header: a control frame's.
const smallFrame = frame.MaxControlPayload

// WriteMessage sends a whole message: the sequential style's write. In the handler it returns
// once the message is queued and the connection's output is under the server's high-water
// mark, parking the handler while a slow client catches up; from Events' functions or a
// Loop.Post callback, which cannot wait, it queues the message and returns. It returns
// ErrClosed (or why the connection closed) once it has closed or begun to. A goroutine writes
// with the Remote's WriteMessage, which waits the same way.
func (c *Conn) WriteMessage(typ MessageType, data []byte) error {
	if typ != Text && typ != Binary {
		return errBadType
	}
	c.hc.MustBeOnLoop("websocket.Conn.WriteMessage", goroutinesUseRemote)
	if c.seq == nil || !c.seq.cx.Seam().MayPark() {
		return c.sendErr(c.send(typ, data, true)) // code that cannot wait: bounded as Send is
	}
	// In the handler's coroutine the write runs on the loop's stack: the output queue's
	// frames, on top of the handler's own, would grow the stack the handler then keeps while
	// it parks (see Accept). The message is queued whatever its size, and the handler waits
	// for it to drain: what waits for the client is the high-water mark and one message.
	if err := c.sendErr(SendResult(c.seq.cx.Seam().OnLoopStack(sendOnLoop, c, data, int(typ)))); err != nil {
		return err
	}
	return c.awaitDrain()
}

// sendOnLoop is WriteMessage's send, run on the loop's stack.
func sendOnLoop(p any, data []byte, typ int) int {
	return int(p.(*Conn).send(MessageType(typ), data, false))
}

// sendErr is the error of a write that send answered r.
func (c *Conn) sendErr(r SendResult) error {
	switch r {
	case SendQueued, SendBackpressure:
		return nil
	}
	if err := c.closeErr(); err != nil {
		return err
	}
	return ErrClosed
}

// awaitDrain parks the handler, when the code running is the handler, while the output is over
// the high-water mark.
func (c *Conn) awaitDrain() error {
	if c.seq == nil || !c.seq.cx.Seam().MayPark() {
		return nil
	}
	for c.hc.Buffered() > c.hc.HighWater() && c.state < stateDone {
		c.writerWait = true
		c.seq.park() // woken by Drained or Closed; what the connection's state says is what counts
		c.writerWait = false
	}
	if c.state >= stateDone {
		return c.closeErr()
	}
	return nil
}

// Close begins the close handshake (RFC 6455 §7.1.2): a close frame with code and reason goes
// out after what is queued, nothing more can be sent, and the TCP connection closes when the
// client answers with its own, or after Options.CloseTimeout. Reads go on until then. code is
// CloseNormal, CloseGoingAway, one of the other codes a server may send (1001-1003,
// 1007-1011, 1012, 1013) or one of 3000-4999; reason is UTF-8, at most 123 bytes. Close
// returns at once, and does nothing once the connection is closing. Goroutines close with the
// Remote's Close.
func (c *Conn) Close(code uint16, reason string) error {
	if err := checkClose(code, reason); err != nil {
		return err
	}
	c.hc.MustBeOnLoop("websocket.Conn.Close", goroutinesUseRemote)
	c.startClose(code, reason)
	return nil
}

// startClose sends the close frame and awaits the client's, on the loop.
func (c *Conn) startClose(code uint16, reason string) {
	if c.state != stateOpen {
		return
	}
	var b [frame.MaxControlPayload]byte
	c.writeFrame(frame.Close, frame.AppendClose(b[:0], code, reason), true, false)
	c.setErr(&CloseError{Code: code, Reason: reason})
	c.setState(stateClosing)
	c.awaitPong = false
	c.timerAt = now() + int64(c.o.closeTimeout())
	c.schedule()
	c.wakeWriters() // nothing more can be written: a handler waiting for the output is done
}
