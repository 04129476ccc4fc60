package core

import (
	"strconv"

	"github.com/dwellhttp/dwell/core/internal/wire"
)

// writeHead writes the response head into the connection's queue, in the placeholder ahead of any
// body already written. whole means the handler has returned, so the body is complete and its
// length known; otherwise the body streams from here (chunked in HTTP/1.1, delimited by the
// close in 1.0, or by a declared Content-Length).
func (cx *Ctx) writeHead(whole bool) {
	c := cx.conn
	l := cx.l
	pool := &l.pool
	status := cx.statusCode()
	noBody := cx.noBody()
	if noBody {
		c.out.dropAfterHead(pool)
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
	case whole && cx.declLen < 0:
		length = cx.written
	case cx.declLen >= 0:
		length = cx.declLen
	case noBody:
	case http11:
		cx.resp |= rfChunked
	default:
		cx.resp |= rfCloseDelimited | rfClose
	}
	close := c.closesAfter(cx)
	buffered := c.out.afterHead()
	fields := cx.fieldBytes()

	n := 200 + len(fields)
	if whole && buffered <= copyLimit {
		n += int(buffered) // room to merge a small body into the head's buffer (fillHead)
	}
	// More input behind this request means pipelined requests whose responses can follow
	// this one in its buffer.
	b := wire.AppendStatusLine(c.out.headRoom(pool, n, len(c.in) > 0), status)
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
	c.out.fillHead(pool, b)
	if chunkedBody {
		c.out.write(pool, crlf)
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
		c.out.dropHead(&cx.l.pool) // a response not started is not sent at all
		return
	}
	if cx.resp&rfCommitted == 0 {
		cx.serverAnswer()
		cx.writeHead(true)
	} else if cx.resp&rfChunked != 0 {
		c.out.write(&cx.l.pool, lastChunk)
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
