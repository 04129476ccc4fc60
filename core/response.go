package core

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
	rfCommitted      respFlags = 1 << iota // the head is queued; the status and fields are final
	rfChunked                              // the body goes out chunked
	rfCloseDelimited                       // the body ends when the connection closes (HTTP/1.0)
	rfHasDate                              // the handler set Date
	rfHasType                              // the handler set Content-Type
	rfClose                                // the response asks for the connection to close after it
	rfAbort                                // the response is abandoned: the client must see it cut
	rfFinished                             // the response is complete: nothing more may be written
)

// reqFlags are facts of the request that the response needs once the request's head is gone
// (a detached response outlives it).
type reqFlags uint8

const (
	reqHTTP11 reqFlags = 1 << iota // the request is HTTP/1.1
	reqHead                        // the request is a HEAD: no body goes out
	reqHTTP2                       // the request came on an HTTP/2 stream (h2stream.go)
)

// ErrBodyNotAllowed is returned by Write for a response that cannot have a body (204, 304).
// Writes to a HEAD response are counted, for its Content-Length, and not sent.
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
	if cx.resp&rfCommitted != 0 {
		return
	}
	if code < 200 && code != 101 {
		cx.sendInterim(code)
		return
	}
	cx.status = uint16(code)
}

// sendInterim queues an interim response ahead of the final one (RFC 9110 §15.2).
func (cx *Ctx) sendInterim(code int) {
	c := cx.conn
	if code == 100 {
		cx.body.waiting100 = false // the client has its 100 Continue: the first read sends none
	}
	if cx.reqf&reqHTTP2 != 0 && c != nil && c.state != stClosed {
		cx.sendInterimH2(code)
		return
	}
	if cx.reqf&reqHTTP11 == 0 || c == nil || c.state == stClosed {
		return // RFC 9110 §15.2: a server MUST NOT send a 1xx response to an HTTP/1.0 client
	}
	pool := &cx.l.pool
	fields := cx.fieldBytes()
	b := wire.AppendStatusLine(pool.Get(len(fields)+64), code)
	b = append(b, fields...)
	b = append(b, crlf...)
	c.out.InsertBeforeHead(pool, b)
	pool.Put(b)
	c.flush()
}

// ResponseStatus returns the response's status set so far (200 when none was).
func (cx *Ctx) ResponseStatus() int {
	cx.check("ResponseStatus")
	return cx.statusCode()
}

func (cx *Ctx) statusCode() int {
	if cx.status == 0 {
		return 200
	}
	return int(cx.status)
}

// ResponseStarted reports whether the response head has been committed: after that, the status
// and header fields can no longer change.
func (cx *Ctx) ResponseStarted() bool {
	cx.check("ResponseStarted")
	return cx.resp&rfCommitted != 0
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
	if cx.declLen >= 0 && cx.written+int64(len(p)) > cx.declLen {
		p = p[:cx.declLen-cx.written]
		err = ErrBodyLength
	}
	cx.written += int64(len(p))
	if cx.noBody() {
		if cx.reqf&reqHead != 0 {
			return len(p), err
		}
		return 0, ErrBodyNotAllowed
	}
	c := cx.conn
	if cx.resp&rfCommitted == 0 {
		if cx.declLen < 0 && cx.written <= c.highWater() {
			// Held behind a placeholder for the head, which is written when the length is known.
			c.out.ReserveHead(&c.l.pool)
			c.out.Write(&cx.l.pool, p)
			return len(p), err
		}
		cx.writeHead(false)
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
	c := cx.conn
	pool := &cx.l.pool
	if cx.resp&rfChunked != 0 {
		var hex [18]byte
		c.out.Write(pool, wire.AppendChunkSize(hex[:0], int64(len(p))))
		if err := cx.send(p); err != nil {
			return err
		}
		c.out.Write(pool, crlf)
		return nil
	}
	return cx.send(p)
}

var crlf = []byte("\r\n")

// flushThreshold: committed output is written once this much is queued; smaller pieces wait for
// more, or for the end of the turn, so that many small writes cost few syscalls.
const flushThreshold = 16 << 10

// send queues p and writes when enough is queued, then parks the handler while the queue is over
// the high-water mark.
func (cx *Ctx) send(p []byte) error {
	c := cx.conn
	if len(p) < engine.MinChunkSize && c.out.Size()+int64(len(p)) < flushThreshold {
		c.out.Write(&cx.l.pool, p)
		return cx.waitDrain()
	}
	for {
		pn, progressed, err := c.out.SendFrom(c.sender(), c.l.iov, &c.l.pool, p)
		if err != nil {
			c.close(ErrClosed)
			return ErrClosed
		}
		p = p[pn:]
		c.afterSend(progressed)
		if len(p) == 0 {
			return cx.waitDrain()
		}
		if !cx.inHandler() || len(p) < engine.MinChunkSize {
			c.out.Write(&cx.l.pool, p) // a continuation cannot park; a small rest is not worth it
			c.updateInterest()
			return cx.waitDrain()
		}
		// The socket is full. Rather than copy the rest of p into the queue, park until the
		// socket takes more and go on from p itself, which stays the handler's until Write
		// returns: one copy (into the kernel) instead of two.
		if err := c.waitWritable(cx); err != nil {
			return err
		}
		if err := cx.writeErr(); err != nil {
			return err
		}
	}
}

// waitDrain parks a handler while its connection's queue is over the high-water mark.
func (cx *Ctx) waitDrain() error {
	c := cx.conn
	for c.state != stClosed && c.out.Size() > c.highWater() {
		if !cx.inHandler() {
			return nil // a continuation cannot park; the queue absorbs it
		}
		if err := cx.parkOnConn(parkWrite); err != nil {
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
	if cx.resp&rfCommitted == 0 {
		cx.writeHead(false)
	}
	c := cx.conn
	progressed, err := c.out.Send(c.sender(), c.l.iov, &c.l.pool, nil)
	if err != nil {
		c.close(ErrClosed)
		return ErrClosed
	}
	c.afterSend(progressed)
	return cx.waitDrain()
}

// writeErr reports why the response can no longer be written.
func (cx *Ctx) writeErr() error {
	if cx.state == ctxIdle || cx.conn == nil {
		return errRequestDone
	}
	if cx.conn.state == stClosed {
		if cx.gone != 0 {
			return cx.gone.err()
		}
		return ErrClosed
	}
	if cx.gone != 0 && cx.gone.err() == ErrDeadline {
		return ErrDeadline // the request's time is up: what it writes now would not be whole
	}
	if cx.resp&rfFinished != 0 {
		return errResponseComplete
	}
	return nil
}

var (
	errRequestDone      = errors.New("dwell: Ctx used after its request ended")
	errResponseComplete = errors.New("dwell: the response is complete: a completion hook cannot write to it")
)

// noBody reports whether the response must not carry a body: a HEAD request (RFC 9110 §9.3.2) or
// a 1xx, 204 or 304 status (RFC 9110 §6.4.1).
func (cx *Ctx) noBody() bool {
	s := cx.status
	return s != 0 && !syntax.StatusAllowsBody(int(s)) || cx.reqf&reqHead != 0
}

// The head, and the response's end.

// writeHead writes the response head into the connection's queue, in the placeholder ahead of any
// body already written. whole means the handler has returned, so the body is complete and its
// length known; otherwise the body streams from here (chunked in HTTP/1.1, delimited by the
// close in 1.0, or by a declared Content-Length).
func (cx *Ctx) writeHead(whole bool) {
	if cx.reqf&reqHTTP2 != 0 {
		cx.writeHeadH2(whole)
		return
	}
	c := cx.conn
	l := cx.l
	pool := &l.pool
	status := cx.statusCode()
	noBody := cx.noBody()
	if noBody {
		c.out.DropAfterHead(pool)
	}
	http11 := cx.reqf&reqHTTP11 != 0
	length := int64(-1)
	switch {
	case whole && (status < 200 || status == 204 || status == 304):
		// RFC 9110 §8.6: no Content-Length in 1xx (a 101 here) or 204; in 304 only if the
		// handler set it.
		if status == 304 {
			length = cx.declLen
		}
		if status == 101 {
			// The handler claims to switch protocols, which only it could speak; the
			// connection cannot go on as HTTP/1.1.
			cx.resp |= rfClose
		}
	case whole && cx.declLen < 0 && !(http11 && cx.hasTrailers() && !noBody):
		length = cx.written
	case cx.declLen >= 0:
		length = cx.declLen
	case noBody:
	case http11:
		cx.resp |= rfChunked // trailers, when there are any, follow the last chunk
	default:
		cx.resp |= rfCloseDelimited | rfClose
	}
	close := c.closesAfter(cx)
	buffered := c.out.AfterHead()
	fields := cx.fieldBytes()

	n := 200 + len(fields)
	if whole && buffered <= copyLimit {
		n += int(buffered) // room to merge a small body into the head's buffer (fillHead)
	}
	// More input behind this request means pipelined requests whose responses can follow
	// this one in its buffer.
	b := wire.AppendStatusLine(c.out.HeadRoom(pool, n, len(c.in) > 0), status)
	if cx.resp&rfHasDate == 0 {
		b = append(b, "Date: "...)
		b = append(b, l.date[:]...)
		b = append(b, crlf...)
	}
	b = append(b, fields...)
	if cx.resp&rfHasType == 0 && !noBody && (length != 0 || !whole) {
		b = append(b, "Content-Type: text/plain; charset=utf-8\r\n"...)
	}
	switch {
	case cx.resp&rfChunked != 0:
		b = append(b, "Transfer-Encoding: chunked\r\n"...)
	case length >= 0:
		b = append(b, "Content-Length: "...)
		b = strconv.AppendInt(b, length, 10)
		b = append(b, crlf...)
	}
	switch {
	case close:
		b = append(b, "Connection: close\r\n"...)
		cx.resp |= rfClose // the head says so: the connection decides after it (conn.endRequest)
	case !http11:
		b = append(b, "Connection: keep-alive\r\n"...)
	}
	b = append(b, crlf...)
	chunkedBody := cx.resp&rfChunked != 0 && buffered > 0
	if chunkedBody {
		b = wire.AppendChunkSize(b, buffered) // the body held so far becomes the first chunk
	}
	c.out.FillHead(pool, b)
	if chunkedBody {
		c.out.Write(pool, crlf)
	}
	cx.resp |= rfCommitted
}

// copyLimit: a body up to this size goes out in the same buffer as its head.
const copyLimit = 4 << 10

// completeResponse completes the response once the handler (or its continuation) is done: the
// server answers for a handler that did not (see serverAnswer), the head goes out if it has
// not, and a chunked body gets its last chunk — unless the response was aborted, which must
// reach the client cut short. It reports in rfClose and rfAbort what the connection must do
// after it (see conn.endRequest).
func (cx *Ctx) completeResponse() {
	c := cx.conn
	if c.state == stClosed {
		return
	}
	if cx.resp&rfCommitted != 0 && cx.gone != 0 && cx.gone.err() == ErrDeadline {
		cx.resp |= rfAbort // the deadline passed mid-response: it must reach the client cut
	}
	if cx.resp&rfAbort != 0 {
		c.out.DropHead(&cx.l.pool) // a response not started is not sent at all
		return
	}
	if cx.resp&rfCommitted == 0 {
		cx.serverAnswer()
		cx.writeHead(true)
	} else if cx.resp&rfChunked != 0 && !cx.hasTrailers() {
		c.out.Write(&cx.l.pool, lastChunk)
	}
	if cx.hasTrailers() {
		cx.queueTrailers()
	}
	if cx.declLen >= 0 && cx.written < cx.declLen && !cx.noBody() {
		// The body is shorter than the Content-Length sent: the client would wait for the rest
		// or take the next response as it, so the connection must end here.
		cx.l.log.Warn("dwell: response body shorter than its Content-Length; closing the connection",
			"declared", cx.declLen, "written", cx.written)
		cx.resp |= rfClose
	}
}

var lastChunk = []byte("0\r\n\r\n")
