package core

import (
	"strconv"

	"github.com/dwellhttp/dwell/core/internal/wire"
)

// The connection's side of a response: HTTP/1.1's framing of the head, the interim responses
// and the trailers, in the connection's write queue.

// writeHead writes the response head into the connection's queue, in the placeholder ahead of any
// body already written. whole means the handler has returned, so the body is complete and its
// length known; otherwise the body streams from here (chunked in HTTP/1.1, delimited by the
// close in 1.0, or by a declared Content-Length).
func (c *conn) writeHead(cx *Ctx, whole bool) {
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

// sendInterim queues an interim response ahead of the final one (RFC 9110 §15.2): its status line
// and the fields set so far, written at once.
func (c *conn) sendInterim(cx *Ctx, code int) {
	if cx.reqf&reqHTTP11 == 0 || c.state == stClosed {
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

// queueTrailers queues the last chunk of a chunked body and the trailer section after it. (Out
// of completeResponse's frame, which every parked request's stack may hold.)
//
//go:noinline
func (c *conn) queueTrailers(cx *Ctx) {
	if cx.resp&rfChunked != 0 {
		b := cx.appendTrailerLines(cx.l.h2scratch[:0])
		c.out.Write(&cx.l.pool, b)
		cx.l.h2scratch = b[:0]
	}
}
