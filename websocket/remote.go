package websocket

import (
	"io"
	"unicode/utf8"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/websocket/internal/frame"
)

// A Remote is the goroutine side of a Conn: what an application hands to its goroutines (a
// writer pumping from a channel, a reader gorilla-style, another loop's code). Every call posts
// to the connection's loop, which runs it there in the order the calls were made, so that
// writes from any number of goroutines are sent whole, one after another, never interleaved.
// The calls that answer (ReadMessage, WriteMessage, Err) wait for the loop; Send, SendPrepared
// and Close do not, and may be made by another loop's code. Code of the connection's own loop
// uses the Conn, and is refused a Remote's calls with a panic that says so.
type Remote struct {
	c *Conn        // the loop's: touched only in what is posted there, or once it has closed
	r *core.Remote // the posting, the waiting for the output to drain
}

// Remote returns the goroutine side of c, the same one each time. Call it on c's loop — in the
// handler, say, before it starts the goroutines that use the connection.
func (c *Conn) Remote() *Remote {
	c.hc.MustBeOnLoop("websocket.Conn.Remote", "")
	r := c.rareState()
	if r.remote == nil {
		r.remote = &Remote{c: c, r: c.hc.Remote()}
	}
	return r.remote
}

// Send queues a message for the client and says so at once, as Conn.Send does, but without
// waiting for the loop: data is copied and posted, the loop applies the slow-client policy when
// it runs the send, and the result is SendClosed or what the connection last said of its
// output: SendBackpressure while it is over the high-water mark, else SendQueued. The type must
// be Text or Binary; a Text message is sent as it is, its UTF-8 the caller's to ensure.
func (r *Remote) Send(typ MessageType, data []byte) SendResult {
	if typ != Text && typ != Binary {
		panic(errBadType)
	}
	c := r.c
	own := append([]byte(nil), data...)
	return r.post(func() { c.send(typ, own, true) })
}

// SendPrepared sends a prepared message as Send sends a message.
func (r *Remote) SendPrepared(pm *PreparedMessage) SendResult {
	c := r.c
	return r.post(func() { c.sendPrepared(pm) })
}

// post runs the send f on the connection's loop, without waiting for it: what the result can
// say at once is what the loop last published.
func (r *Remote) post(f func()) SendResult {
	c := r.c
	if c.pub.Load()&pubClosed != 0 || r.r.Post(f) != nil {
		return SendClosed
	}
	if c.pub.Load()&pubOver != 0 {
		return SendBackpressure
	}
	return SendQueued
}

// do runs f on the connection's loop and waits for it, whether or not the connection has
// closed (what f reads of c is then final). It reports false when the loop has stopped.
func (r *Remote) do(f func()) bool {
	done := make(chan struct{})
	if r.r.Post(func() { f(); close(done) }) != nil {
		return false
	}
	<-done
	return true
}

// WriteMessage sends a whole message, as Conn.WriteMessage does in the handler: it returns once
// the message is queued and the connection's output is under the server's high-water mark,
// waiting while a slow client catches up. It returns ErrClosed (or why the connection closed)
// once it has closed or begun to.
func (r *Remote) WriteMessage(typ MessageType, data []byte) error {
	if typ != Text && typ != Binary {
		return errBadType
	}
	c := r.c
	err, over := error(ErrClosed), false // unless the loop runs the write
	r.do(func() {
		err = c.sendErr(c.send(typ, data, false)) // bounded by the wait below
		over = err == nil && c.hc.Buffered() > c.hc.HighWater()
	})
	if over {
		r.r.WaitDrained() // until the output drains or the connection closes
	}
	return err
}

// NextWriter returns a writer for one message of type typ, as Conn.NextWriter does; its Close
// sends the message with the Remote's WriteMessage.
func (r *Remote) NextWriter(typ MessageType) (io.WriteCloser, error) {
	if typ != Text && typ != Binary {
		return nil, errBadType
	}
	return &messageWriter{c: r.c, r: r, typ: typ}, nil
}

// ReadMessage waits for the next message and returns its type and its bytes, which are the
// caller's; it fails as Conn.ReadMessage does. Any number of goroutines may wait: each message
// goes to one of them, the one that asked first.
func (r *Remote) ReadMessage() (MessageType, []byte, error) {
	res := r.next(false)
	return res.typ, res.data, res.err
}

// NextReader waits for the next message and returns it as an io.Reader, as Conn.NextReader
// does: the connection's one reader, valid until the next call, so for one goroutine at a time.
func (r *Remote) NextReader() (MessageType, io.Reader, error) { return r.next(true).reader() }

// next waits on a channel the loop answers for the next message; with withReader, the result
// carries the connection's messageReader, made on the loop the first time.
func (r *Remote) next(withReader bool) readResult {
	c := r.c
	ch := make(chan readResult, 1)
	var mr *messageReader
	if r.r.Post(func() {
		if withReader {
			mr = c.messageReader()
		}
		c.rareState().readers = append(c.rare.readers, ch)
		c.serveReaders()
	}) != nil {
		return readResult{err: ErrClosed}
	}
	res := <-ch // sent after mr was set: the channel orders the two
	res.mr = mr
	return res
}

// Close begins the close handshake, as Conn.Close does, without waiting for the loop.
func (r *Remote) Close(code uint16, reason string) error {
	if err := checkClose(code, reason); err != nil {
		return err
	}
	c := r.c
	r.r.Post(func() { c.startClose(code, reason) }) // a stopped loop has closed the connection
	return nil
}

// Err returns why the connection closed, nil while it is open, waiting for the loop to say.
func (r *Remote) Err() error {
	c := r.c
	err := error(ErrClosed) // unless the loop answers
	r.do(func() { err = c.closeErr() })
	return err
}

// checkClose checks a close's code and reason, for Conn.Close and Remote.Close.
func checkClose(code uint16, reason string) error {
	if !frame.ValidCloseCode(code) {
		return errBadCloseCode
	}
	if len(reason) > frame.MaxControlPayload-2 || !utf8.ValidString(reason) {
		return errCloseReasonLen
	}
	return nil
}
