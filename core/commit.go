package core

import (
	"io"
	"runtime/debug"
	"strconv"
)

// commit writes the response head into the connection's queue, in the placeholder ahead of any
// body already written. whole means the handler has returned, so the body is complete and its
// length known; otherwise the body streams from here (chunked in HTTP/1.1, delimited by the
// close in 1.0, or by a declared Content-Length).
func (cx *Ctx) commit(whole bool) {
	c := cx.conn
	l := c.l
	pool := &l.pool
	status := cx.Status()
	interim := 0
	if status < 200 && status != 101 {
		// A 1xx status is informational (RFC 9110 §15.2): it goes out on its own and the final
		// response follows, as 200 unless the handler says otherwise.
		interim = status
		status = 200
		cx.status = 200
	}
	noBody := cx.noBody()
	if noBody {
		c.out.dropAfterHead(pool)
	}
	http11 := cx.rflags&rfHTTP11 != 0
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
			cx.rflags |= rfClose
		}
	case whole && cx.declLen < 0:
		length = cx.written
	case cx.declLen >= 0:
		length = cx.declLen
	case noBody:
	case http11:
		cx.rflags |= rfChunked
	default:
		cx.rflags |= rfCloseDelimited | rfClose
	}
	if l.shutting {
		cx.rflags |= rfClose
	}
	close := !c.keepAlive || cx.rflags&rfClose != 0
	buffered := c.out.afterHead()

	n := 200
	for _, h := range cx.headers() {
		n += len(h.name) + len(h.value) + 4
	}
	if whole && buffered <= copyLimit {
		n += int(buffered) // room to merge a small body into the head's buffer (fillHead)
	}
	b := pool.get(n)
	if interim != 0 {
		b = appendStatusLine(b, interim)
		b = append(b, crlf...)
	}
	b = appendStatusLine(b, status)
	if cx.rflags&rfHasDate == 0 {
		b = append(b, "Date: "...)
		b = append(b, l.date[:]...)
		b = append(b, crlf...)
	}
	for _, h := range cx.headers() {
		b = append(b, h.name...)
		b = append(b, ": "...)
		b = append(b, h.value...)
		b = append(b, crlf...)
	}
	if cx.rflags&rfHasType == 0 && !noBody && (length != 0 || !whole) {
		b = append(b, "Content-Type: text/plain; charset=utf-8\r\n"...)
	}
	switch {
	case cx.rflags&rfChunked != 0:
		b = append(b, "Transfer-Encoding: chunked\r\n"...)
	case length >= 0:
		b = append(b, "Content-Length: "...)
		b = strconv.AppendInt(b, length, 10)
		b = append(b, crlf...)
	}
	switch {
	case close:
		b = append(b, "Connection: close\r\n"...)
		c.keepAlive = false
	case !http11:
		b = append(b, "Connection: keep-alive\r\n"...)
	}
	b = append(b, crlf...)
	chunkedBody := cx.rflags&rfChunked != 0 && buffered > 0
	if chunkedBody {
		b = appendChunkSize(b, buffered) // the body held so far becomes the first chunk
	}
	c.out.fillHead(pool, b)
	if chunkedBody {
		c.out.write(pool, crlf)
	}
	cx.rflags |= rfCommitted
}

// copyLimit: a body up to this size goes out in the same buffer as its head.
const copyLimit = 4 << 10

// finish completes the response once the handler (or its continuation) is done.
func (cx *Ctx) finish() {
	c := cx.conn
	defer cx.end()
	if c.state == stClosed {
		return
	}
	if cx.rflags&rfCommitted == 0 {
		cx.bodyErrorResponse()
		cx.commit(true)
	} else if cx.rflags&rfChunked != 0 {
		c.out.write(&c.l.pool, lastChunk)
	}
	if cx.declLen >= 0 && cx.written < cx.declLen && !cx.noBody() {
		// The body is shorter than the Content-Length sent: the client would wait for the rest
		// or take the next response as it, so the connection must end here.
		c.l.log.Warn("dwell: response body shorter than its Content-Length; closing the connection",
			"declared", cx.declLen, "written", cx.written)
		cx.rflags |= rfClose
	}
	if cx.rflags&rfClose != 0 {
		c.keepAlive = false
	}
}

var lastChunk = []byte("0\r\n\r\n")

// bodyErrorResponse answers for a handler that returned without responding after its request
// body failed — 400 for broken framing or a body cut short, 413 past the size limit, 408 for a
// body that stopped coming, the connection closing after it since the body's end is unknown —
// or after the
// shutdown's grace period ended its wait: 503.
func (cx *Ctx) bodyErrorResponse() {
	if cx.status != 0 || cx.written != 0 {
		return
	}
	if cx.gone.err() == ErrShutdown {
		cx.errorResponse(503, "the server is shutting down")
		return
	}
	err := cx.body.err()
	if err == nil {
		return
	}
	status := 0
	switch e := err.(type) {
	case *framingError:
		status = e.StatusCode()
	default:
		switch err {
		case ErrBodyTooLarge:
			status = 413
		case ErrTimeout:
			status = 408
		case io.ErrUnexpectedEOF:
			status = 400 // the client stopped sending before the end of the body it declared
		}
	}
	if status == 0 {
		return
	}
	cx.errorResponse(status, err.Error())
}

// errorResponse replaces whatever the handler prepared with a plain-text error and closes the
// connection after it.
func (cx *Ctx) errorResponse(status int, msg string) {
	c := cx.conn
	cx.clearHeaders()
	c.out.dropAfterHead(&c.l.pool)
	cx.rflags = cx.rflags&(rfHead|rfHTTP11) | rfClose
	cx.status = uint16(status)
	cx.declLen = -1
	cx.written = 0
	cx.WriteString(strconv.Itoa(status) + " " + StatusText(status) + ": " + msg + "\n")
}

// handlerPanic logs a handler's panic and answers 500 if the response has not started; if it
// has, the connection closes, as the response cannot be completed.
func (l *Loop) handlerPanic(cx *Ctx, r any) {
	l.log.Error("dwell: panic in handler", "method", cx.Method(), "target", cx.Target(),
		"remote", cx.conn.remoteAddr(), "panic", r, "stack", string(debug.Stack()))
	if cx.conn.state == stClosed {
		return
	}
	if cx.rflags&rfCommitted == 0 {
		cx.errorResponse(500, "the handler failed")
		return
	}
	cx.rflags |= rfClose
}

// writeReject queues the response to a request refused before its handler.
func writeReject(c *conn, rej *reject) {
	l := c.l
	pool := &l.pool
	text := StatusText(rej.status)
	b := c.out.spare(pool, 200+len(rej.reason)+len(text))
	b = appendStatusLine(b, rej.status)
	b = append(b, "Date: "...)
	b = append(b, l.date[:]...)
	b = append(b, "\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\nContent-Length: "...)
	b = strconv.AppendInt(b, int64(len(text)+len(rej.reason)+7), 10)
	b = append(b, "\r\n\r\n"...)
	b = strconv.AppendInt(b, int64(rej.status), 10)
	b = append(b, ' ')
	b = append(b, text...)
	b = append(b, ": "...)
	b = append(b, rej.reason...)
	b = append(b, '\n')
	c.out.commit(pool, b)
}
