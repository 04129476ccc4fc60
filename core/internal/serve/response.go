package serve

import (
	"errors"
	"strconv"

	"github.com/dwellhttp/dwell/core/internal/engine"
	"github.com/dwellhttp/dwell/core/internal/wire"
	"github.com/dwellhttp/dwell/internal/alias"
	"github.com/dwellhttp/dwell/internal/syntax"
)

// respFlags describe the response as it is built and sent.
type respFlags uint8

const (
	RfCommitted      respFlags = 1 << iota // the head is queued; the status and fields are final
	RfChunked                              // the body goes out chunked
	RfCloseDelimited                       // the body ends when the connection closes (HTTP/1.0)
	RfHasDate                              // the handler set Date
	RfHasType                              // the handler set Content-Type
	RfClose                                // the response asks for the connection to close after it
	RfAbort                                // the response is abandoned: the client must see it cut
	RfFinished                             // the response is complete: nothing more may be written
)

// reqFlags are facts of the request that the response needs once the request's head is gone
// (a detached response outlives it).
type reqFlags uint8

const (
	ReqHTTP11 reqFlags = 1 << iota // the request is HTTP/1.1
	reqHead                        // the request is a HEAD: no body goes out
)

// ErrBodyNotAllowed is returned by Write for a response that cannot have a body (204, 304).
// Writes to a HEAD response are counted, for its Content-Length, and not sent (with nothing
// written it has none: it would have to be GET's, which the server cannot know).
var ErrBodyNotAllowed = errors.New("dwell: response status does not allow a body")

// SetStatus sets the response status code, 200 by default. It has no effect once the response
// has started (after Flush, or once written bytes passed the high-water mark). A code outside
// 100–999 is a programming error and panics, as in net/http.
//
// An informational status (1xx other than 101) is not the response's status: it is sent at
// once as an interim response, with the header fields set so far (103 Early Hints with its
// Link fields, say), and the final status stays 200 unless set again. HTTP/1.0 clients get no
// interim response (RFC 9110 §15.2).
func (cx *Ctx) SetStatus(code int) {
	cx.check("SetStatus")
	if code < 100 || code > 999 {
		panic("dwell: invalid status code " + strconv.Itoa(code))
	}
	if cx.Resp&RfCommitted != 0 {
		return
	}
	if code < 200 && code != 101 {
		cx.sendInterim(code)
		return
	}
	cx.Status = uint16(code)
}

// SendInterim queues an interim response ahead of the final one (RFC 9110 §15.2).
func (cx *Ctx) sendInterim(code int) {
	if code == 100 {
		cx.Body.Waiting100 = false // the client has its 100 Continue: the first read sends none
	}
	if cx.Exchange != nil {
		cx.Exchange.SendInterim(cx, code)
	}
}

// ResponseStatus returns the response's status set so far (200 when none was).
func (cx *Ctx) ResponseStatus() int {
	cx.check("ResponseStatus")
	return cx.StatusCode()
}

func (cx *Ctx) StatusCode() int {
	if cx.Status == 0 {
		return 200
	}
	return int(cx.Status)
}

// ResponseStarted reports whether the response head has been committed: after that, the status
// and header fields can no longer change.
func (cx *Ctx) ResponseStarted() bool {
	cx.check("ResponseStarted")
	return cx.Resp&RfCommitted != 0
}

// WriteString is Write for a string, without a copy.
func (cx *Ctx) WriteString(s string) (int, error) {
	if !cx.owned() {
		return 0, cx.misused("WriteString")
	}
	// Viewing s as bytes is safe: write, like every io.Writer, neither changes nor keeps p (it
	// copies p into the write queue, or hands it to a filter bound by the same contract).
	return cx.write(alias.Bytes(s))
}

// Write appends p to the response body. The body is held until the handler returns, so that it
// goes out with a Content-Length; once it passes WriteHighWater (or after Flush, or when the
// handler declared a Content-Length) the head is sent and the body streams — chunked for
// HTTP/1.1 without a declared length. While more than WriteHighWater bytes wait for a slow
// client the handler parks, and resumes when the client has taken half. A client that is gone
// makes Write return ErrClosed at once.
//
// With a body filter installed (Seam.WrapBody), p goes through it first.
//
// In a continuation (after Detach) Write cannot park: past the high-water mark bytes are
// queued, so a continuation that writes a lot should write in steps (wait.After).
func (cx *Ctx) Write(p []byte) (int, error) {
	if !cx.owned() {
		return 0, cx.misused("Write")
	}
	return cx.write(p)
}

// write is Write for the request's own code.
func (cx *Ctx) write(p []byte) (int, error) {
	if f := cx.filter(); f != nil {
		return f.Write(p)
	}
	return cx.writeBody(p)
}

// writeBody writes p to the response body itself, after any filter.
func (cx *Ctx) writeBody(p []byte) (int, error) {
	if err := cx.writeErr(); err != nil {
		return 0, err
	}
	var err error
	if cx.DeclLen >= 0 && cx.Written+int64(len(p)) > cx.DeclLen {
		p = p[:cx.DeclLen-cx.Written]
		err = ErrBodyLength
	}
	cx.Written += int64(len(p))
	if cx.NoBody() {
		if cx.ReqFlags&reqHead != 0 {
			return len(p), err
		}
		return 0, ErrBodyNotAllowed
	}
	if cx.Resp&RfCommitted == 0 {
		if c := cx.Carrier; cx.DeclLen < 0 && cx.Written <= cx.Exchange.HighWater() {
			// Held behind a placeholder for the head, which is written when the length is known.
			c.Out.ReserveHead(&c.Loop.Pool)
			c.Out.Write(&cx.Loop.Pool, p)
			return len(p), err
		}
		cx.Exchange.WriteHead(cx, false)
	}
	// p goes to the socket from the handler's own memory: while the socket is full the handler
	// parks on p (see send), so even a single large Write holds no more than the high-water
	// mark of the server's memory, and the kernel gets large writes.
	if err := cx.stream(p); err != nil {
		return 0, err
	}
	return len(p), err
}

// stream sends p as part of a committed body, framing it as a chunk if the body is chunked.
func (cx *Ctx) stream(p []byte) error {
	if len(p) == 0 {
		return nil
	}
	c := cx.Carrier
	pool := &cx.Loop.Pool
	if cx.Resp&RfChunked != 0 {
		var hex [18]byte
		c.Out.Write(pool, wire.AppendChunkSize(hex[:0], int64(len(p))))
		if err := cx.send(p); err != nil {
			return err
		}
		c.Out.Write(pool, CRLF)
		return nil
	}
	return cx.send(p)
}

// CRLF ends a line of HTTP/1.1's head and of a chunk.
var CRLF = []byte("\r\n")

// CopyLimit: a body held whole up to this size goes out in the same buffer as its head (an
// HTTP/1.1 status line's, an HTTP/2 HEADERS frame's); a larger one leaves from the buffer the
// handler's writes filled.
const CopyLimit = 4 << 10

// flushThreshold: committed output is written once this much is queued; smaller pieces wait for
// more, or for the end of the turn, so that many small writes cost few syscalls.
const flushThreshold = 16 << 10

// send queues p and writes when enough is queued, then parks the handler while the queue is over
// the high-water mark.
func (cx *Ctx) send(p []byte) error {
	c, ex := cx.Carrier, cx.Exchange
	if len(p) < engine.MinChunkSize && c.Out.Size()+int64(len(p)) < flushThreshold {
		c.Out.Write(&cx.Loop.Pool, p)
		return cx.waitDrain()
	}
	for {
		pn, progressed, err := c.Out.SendFrom(ex.Sender(), c.Loop.IOV, &c.Loop.Pool, p, ex.HighWater())
		if err != nil {
			ex.Close(ErrClosed)
			return ErrClosed
		}
		p = p[pn:]
		ex.AfterSend(progressed)
		if len(p) == 0 {
			return cx.waitDrain()
		}
		if !cx.InHandler() || len(p) < engine.MinChunkSize {
			c.Out.Write(&cx.Loop.Pool, p) // a continuation cannot park; a small rest is not worth it
			ex.UpdateInterest()
			return cx.waitDrain()
		}
		// The socket is full. Rather than copy the rest of p into the queue, park until the
		// socket takes more and go on from p itself, which stays the handler's until Write
		// returns: one copy (into the kernel) instead of two.
		if err := ex.WaitWritable(cx); err != nil {
			return err
		}
		if err := cx.writeErr(); err != nil {
			return err
		}
	}
}

// waitDrain parks a handler while its connection's queue is over the high-water mark.
func (cx *Ctx) waitDrain() error {
	c := cx.Carrier
	for c.State != StClosed && c.Out.Size() > cx.Exchange.HighWater() {
		if !cx.InHandler() {
			return nil // a continuation cannot park; the queue absorbs it
		}
		if err := cx.ParkOnConn(ParkWrite); err != nil {
			return err
		}
	}
	return cx.writeErr()
}

// Flush sends the response head, if it has not gone yet, and everything written so far, without
// waiting for the client to take it. After Flush the body streams (see Write). With a body
// filter installed (Seam.WrapBody), the filter's Flush runs first.
func (cx *Ctx) Flush() error {
	if !cx.owned() {
		return cx.misused("Flush")
	}
	if f := cx.filter(); f != nil {
		return f.Flush()
	}
	return cx.flushBody()
}

// flushBody is Flush for the response body itself, after any filter.
func (cx *Ctx) flushBody() error {
	if err := cx.writeErr(); err != nil {
		return err
	}
	if cx.Resp&RfCommitted == 0 {
		cx.Exchange.WriteHead(cx, false)
	}
	if err := cx.sendQueued(); err != nil {
		return err
	}
	return cx.waitDrain()
}

// sendQueued writes the exchange's queue as far as the client takes it now.
func (cx *Ctx) sendQueued() error {
	c, ex := cx.Carrier, cx.Exchange
	progressed, err := c.Out.Send(ex.Sender(), c.Loop.IOV, &c.Loop.Pool, nil)
	if err != nil {
		ex.Close(ErrClosed)
		return ErrClosed
	}
	ex.AfterSend(progressed)
	return nil
}

// writeErr reports why the response can no longer be written.
func (cx *Ctx) writeErr() error {
	if cx.State == CtxIdle || cx.Carrier == nil {
		return errRequestDone
	}
	if cx.Carrier.State == StClosed {
		if cx.Gone != 0 {
			return cx.Gone.err()
		}
		return ErrClosed
	}
	if cx.Gone != 0 && cx.Gone.err() == ErrDeadline {
		return ErrDeadline // the request's time is up: what it writes now would not be whole
	}
	if cx.Resp&RfFinished != 0 {
		return errResponseComplete
	}
	return nil
}

var (
	errRequestDone      = errors.New("dwell: Ctx used after its request ended")
	errResponseComplete = errors.New("dwell: the response is complete: a completion hook cannot write to it")
)

// NoBody reports whether the response must not carry a body: a HEAD request (RFC 9110 §9.3.2) or
// a 1xx, 204 or 304 status (RFC 9110 §6.4.1).
func (cx *Ctx) NoBody() bool {
	s := cx.Status
	return s != 0 && !syntax.StatusAllowsBody(int(s)) || cx.ReqFlags&reqHead != 0
}

// The head, and the response's end.

// CompleteResponse completes the response once the handler (or its continuation) is done: the
// server answers for a handler that did not (see serverAnswer), the head goes out if it has
// not, and a chunked body gets its last chunk — unless the response was aborted, which must
// reach the client cut short. It reports in RfClose and RfAbort what the connection must do
// after it (see Exchange.EndRequest).
func (cx *Ctx) CompleteResponse() {
	c := cx.Carrier
	if c.State == StClosed {
		return
	}
	if cx.Resp&RfCommitted != 0 && cx.Gone != 0 && cx.Gone.err() == ErrDeadline {
		cx.Resp |= RfAbort // the deadline passed mid-response: it must reach the client cut
	}
	if cx.Resp&RfAbort != 0 {
		c.Out.DropHead(&cx.Loop.Pool) // a response not started is not sent at all
		return
	}
	if cx.Resp&RfCommitted == 0 {
		if cx.Gone != 0 || cx.Status == 0 && cx.Written == 0 {
			cx.serverAnswer() // the request may have gone wrong, and the handler not said
		}
		cx.Exchange.WriteHead(cx, true)
	} else if cx.Resp&RfChunked != 0 && !cx.HasTrailers() {
		c.Out.Write(&cx.Loop.Pool, lastChunk)
	}
	if cx.HasTrailers() {
		cx.Exchange.QueueTrailers(cx)
	}
	if cx.DeclLen >= 0 && cx.Written < cx.DeclLen && !cx.NoBody() {
		// The body is shorter than the Content-Length sent: the client would wait for the rest
		// or take the next response as it, so the connection must end here.
		cx.Loop.Log.Warn("dwell: response body shorter than its Content-Length; closing the connection",
			"declared", cx.DeclLen, "written", cx.Written)
		cx.Resp |= RfClose
	}
}

var lastChunk = []byte("0\r\n\r\n")
