package websocket

import (
	"io"

	"github.com/dwellhttp/dwell/internal/bufpool"
)

// The sequential style's reads. A message that has arrived whole waits in the connection's
// buffer for one reader, and the connection reads nothing more until a reader has taken it: a
// handler that does not read holds its client back through TCP, not with memory. Readers are
// the handler, parked until a message comes, and goroutines, waiting on a channel the loop
// answers; the first to ask gets the next message.

// A readResult is what the loop answers a goroutine waiting in ReadMessage or NextReader.
type readResult struct {
	typ  MessageType
	data []byte // a message buffer, the reader's now
	err  error
	mr   *messageReader // the connection's reader, for NextReader
}

// ReadMessage returns the next message: its type and its bytes, which are the caller's. It parks
// the handler until a message comes. It returns the error the connection closed with (a *CloseError for a close frame,
// ErrPongTimeout, core.ErrClosed for a client that vanished) once it has closed and no
// message is left. It cannot be used on a connection of the event style (Serve), whose
// messages go to Events.Message, nor from Events' functions or Loop.Post callbacks, which
// cannot wait: it returns an error there. A goroutine reads with the Remote's ReadMessage.
func (c *Conn) ReadMessage() (MessageType, []byte, error) {
	c.hc.MustBeOnLoop("websocket.Conn.ReadMessage", goroutinesUseRemote)
	r := c.next(false)
	return r.typ, r.data, r.err
}

// NextReader returns the next message as an io.Reader, for a caller that reads it into its own
// buffers: the message's memory goes back to the connection's pool once it is read to its end
// (or the next NextReader or ReadMessage call), and a connection that echoes that way
// allocates nothing per message. The reader is the connection's one, valid until the next call
// to NextReader or ReadMessage: unlike ReadMessage, NextReader is for one goroutine at a time.
// It waits, and fails, as ReadMessage does.
func (c *Conn) NextReader() (MessageType, io.Reader, error) {
	c.hc.MustBeOnLoop("websocket.Conn.NextReader", goroutinesUseRemote)
	return c.next(true).reader()
}

// reader returns a message read for NextReader (Conn's or Remote's) as the connection's
// messageReader, which gives back the message before it.
func (r readResult) reader() (MessageType, io.Reader, error) {
	if r.err != nil {
		return 0, nil, r.err
	}
	r.mr.release()
	r.mr.data = r.data
	return r.typ, r.mr, nil
}

// next waits for the next message, parked in the handler. With withReader, the result carries
// the connection's messageReader, made the first time.
func (c *Conn) next(withReader bool) readResult {
	if c.ev != nil {
		return readResult{err: errEventStyle}
	}
	if c.seq == nil || !c.seq.cx.Seam().MayPark() {
		return readResult{err: errCannotWait}
	}
	for !c.ready {
		if c.state >= stateDone {
			return readResult{err: c.closeErr()}
		}
		c.readerWait = true
		c.seq.park() // woken by a message or the close; the connection's state says which
		c.readerWait = false
	}
	cx := c.seq.cx
	// take, with what it asks of core (reading resumed, the rest of the input given) run on
	// the loop's stack, as Accept's handshake is, so that the stack the handler parks with
	// stays small.
	r := readResult{typ: MessageType(c.msgOp), data: c.msg}
	c.msg, c.msgOp, c.ready = nil, 0, false
	if c.state < stateDone {
		cx.Seam().OnLoopStack(resumeOnLoop, c, nil, 0)
	}
	if withReader {
		if c.rare == nil || c.rare.reader == nil {
			cx.Seam().OnLoopStack(readerOnLoop, c, nil, 0)
		}
		r.mr = c.rare.reader
	}
	return r
}

func resumeOnLoop(p any, _ []byte, _ int) int {
	p.(*Conn).hc.ResumeReading()
	return 0
}

// readerOnLoop makes the connection's messageReader, the first time, on the loop's stack.
func readerOnLoop(p any, _ []byte, _ int) int {
	p.(*Conn).messageReader()
	return 0
}

// take hands the message waiting in the buffer to its reader, and reads on.
func (c *Conn) take() readResult {
	r := readResult{typ: MessageType(c.msgOp), data: c.msg}
	c.msg, c.msgOp, c.ready = nil, 0, false
	if c.state < stateDone {
		c.hc.ResumeReading()
	}
	return r
}

// serveReaders answers the goroutines waiting for a message, oldest first, with the message
// waiting or, once the connection is done, its error.
func (c *Conn) serveReaders() {
	r := c.rare
	for len(r.readers) > 0 {
		var res readResult
		switch {
		case c.ev != nil:
			res.err = errEventStyle
		case c.ready:
			res = c.take()
		case c.state >= stateDone:
			res.err = c.closeErr()
		default:
			return
		}
		r.readers[0] <- res
		r.readers[0] = nil
		r.readers = r.readers[1:]
	}
	r.readers = nil
}

// A messageReader reads a message taken by NextReader.
type messageReader struct {
	data []byte
	off  int
}

// messageReader returns the connection's reader, made at its first NextReader: one per
// connection, not one per message.
func (c *Conn) messageReader() *messageReader {
	r := c.rareState()
	if r.reader == nil {
		r.reader = new(messageReader)
	}
	return r.reader
}

func (mr *messageReader) Read(p []byte) (int, error) {
	if mr.off >= len(mr.data) {
		mr.release()
		return 0, io.EOF
	}
	n := copy(p, mr.data[mr.off:])
	mr.off += n
	return n, nil
}

// release gives the message's buffer back.
func (mr *messageReader) release() {
	if mr.data != nil {
		bufpool.Put(mr.data)
	}
	mr.data, mr.off = nil, 0
}
