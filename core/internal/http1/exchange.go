package http1

import (
	"io"
	"strconv"

	"github.com/dwellhttp/dwell/core/internal/netpoll"
	"github.com/dwellhttp/dwell/core/internal/serve"
	"github.com/dwellhttp/dwell/core/internal/wire"
)

// proto reports the request's HTTP version: a higher 1.x minor version is served as 1.1.
func (c *conn) Proto() string {
	if c.Ctx != nil && c.Ctx.ReqFlags&serve.ReqHTTP11 == 0 {
		return "HTTP/1.0"
	}
	return "HTTP/1.1"
}

// ConnectProtocol is "": an HTTP/1.1 request names no protocol to tunnel (no :protocol, RFC 8441).
func (c *conn) ConnectProtocol() string { return "" }

// continue100 is the interim response to Expect: 100-continue (RFC 9110 §15.2.1).
var continue100 = []byte("HTTP/1.1 100 Continue\r\n\r\n")

// SendContinue answers Expect: 100-continue, ahead of anything the handler wrote (its final
// response is not committed yet), unless the body has begun to arrive anyway.
func (c *conn) SendContinue() {
	if len(c.In) == 0 && c.State != serve.StClosed {
		c.Out.InsertBeforeHead(&c.Loop.Pool, continue100)
		c.Flush()
	}
}

// HasInput reports whether input has arrived that the loop has not yet taken.
func (c *conn) HasInput() bool { return len(c.In) > 0 }

// WatchInput watches the socket for input while a handler waits for its body.
func (c *conn) WatchInput() { c.SetInterest(c.Events() | netpoll.WatchRead | netpoll.WatchHangup) }

// ReadBody moves more of cx's body into p: first what has arrived with the head or a chunk
// read before (decoded: n bytes, and io.EOF on the call after the last), then from the socket.
// A Content-Length body is read straight into p, at most the bytes left, so nothing past the
// body is consumed; a chunked body is read into the loop buffer for the decoder (0 bytes and
// no error: decode it), and any bytes past its end stay as the next request's. When nothing has
// arrived the handler parks until something does (ErrReadAgain), with the progress-based body
// timeout.
func (c *conn) ReadBody(cx *serve.Ctx, p []byte) (n int, err error) {
	b := &cx.Body
	if len(c.In) > 0 {
		nd, ns, err := b.Decode(p, c.In)
		c.In = c.In[ns:]
		switch {
		case nd > 0:
			if err == io.EOF {
				err = nil // io.EOF comes with the next call
			}
			return nd, err
		case err == nil:
			return 0, serve.ErrReadAgain
		}
		return 0, err
	}
	if err := c.BodyGone(cx); err != nil {
		return 0, err
	}
	if c.PeerEOF {
		return 0, io.ErrUnexpectedEOF
	}
	var e netpoll.Errno
	if b.Kind == serve.BodyStream {
		n, e = c.Transport().Read(int(c.FD), c, p)
		if n > 0 {
			if b.Remaining >= 0 {
				if int64(n) > b.Remaining {
					return 0, serve.ErrBodyTooLarge
				}
				b.Remaining -= int64(n)
			}
			return n, nil
		}
		if e == 0 {
			b.EOF = true
			return 0, io.EOF
		}
	} else if b.Kind == serve.BodyLength {
		n, e = c.Transport().Read(int(c.FD), c, p[:min(int64(len(p)), b.Remaining)])
		if n > 0 {
			b.Remaining -= int64(n)
			return n, nil
		}
	} else {
		// As much as the handler asked for, of the chunk being read, and room for the framing
		// and the next chunk's start: so little is read past the body's end (see headRead).
		want := int(min(int64(len(c.Loop.Buf)), min(b.Chunked.DataLeft(), int64(len(p)))+headRead))
		n, e = c.Transport().Read(int(c.FD), c, c.Loop.Buf[:want])
		if n > 0 {
			c.In = c.Loop.Buf[:n]
			return 0, nil
		}
	}
	switch {
	case e == 0:
		c.PeerEOF = true
		return 0, io.ErrUnexpectedEOF
	case e == netpoll.EINTR:
		return 0, serve.ErrReadAgain
	case e != netpoll.EAGAIN:
		c.Close(serve.ErrClosed)
		return 0, serve.ErrClosed
	}
	if !cx.InHandler() {
		return 0, serve.ErrReadBodyRefused
	}
	if err := c.waitReadable(cx); err != nil {
		return 0, err
	}
	return 0, serve.ErrReadAgain
}

// WriteHead writes the response head into the connection's queue, in the placeholder ahead of any
// body already written. whole means the handler has returned, so the body is complete and its
// length known; otherwise the body streams from here (chunked in HTTP/1.1, delimited by the
// close in 1.0, or by a declared Content-Length).
func (c *conn) WriteHead(cx *serve.Ctx, whole bool) {
	l := cx.Loop
	pool := &l.Pool
	status := cx.StatusCode()
	noBody := cx.NoBody()
	if noBody {
		c.Out.DropAfterHead(pool)
	}
	http11 := cx.ReqFlags&serve.ReqHTTP11 != 0
	length := int64(-1)
	switch {
	case whole && (status < 200 || status == 204 || status == 304):
		// RFC 9110 §8.6: no Content-Length in 1xx (a 101 here) or 204; in 304 only if the
		// handler set it.
		if status == 304 {
			length = cx.DeclLen
		}
		if status == 101 {
			// The handler claims to switch protocols, which only it could speak; the
			// connection cannot go on as HTTP/1.1.
			cx.Resp |= serve.RfClose
		}
	case whole && noBody && cx.DeclLen < 0 && cx.Written == 0:
		// A HEAD whose handler wrote nothing says nothing of GET's length (RFC 9110 §8.6).
	case whole && cx.DeclLen < 0 && !(http11 && cx.HasTrailers() && !noBody):
		length = cx.Written
	case cx.DeclLen >= 0:
		length = cx.DeclLen
	case noBody:
	case http11:
		cx.Resp |= serve.RfChunked // trailers, when there are any, follow the last chunk
	default:
		cx.Resp |= serve.RfCloseDelimited | serve.RfClose
	}
	close := c.closesAfter(cx)
	buffered := c.Out.AfterHead()

	n := 200 + cx.FieldLinesRoom()
	if whole && buffered <= serve.CopyLimit {
		n += int(buffered) // room to merge a small body into the head's buffer (fillHead)
	}
	// More input behind this request means pipelined requests whose responses can follow
	// this one in its buffer.
	b := wire.AppendStatusLine(c.Out.HeadRoom(pool, n, len(c.In) > 0), status)
	if cx.Resp&serve.RfHasDate == 0 {
		b = append(b, "Date: "...)
		b = append(b, l.Clk.Date[:]...)
		b = append(b, serve.CRLF...)
	}
	b = cx.AppendFieldLines(b)
	if cx.Resp&serve.RfHasType == 0 && !noBody && (length != 0 || !whole) {
		b = append(b, "Content-Type: text/plain; charset=utf-8\r\n"...)
	}
	switch {
	case cx.Resp&serve.RfChunked != 0:
		b = append(b, "Transfer-Encoding: chunked\r\n"...)
	case length >= 0:
		b = append(b, "Content-Length: "...)
		b = strconv.AppendInt(b, length, 10)
		b = append(b, serve.CRLF...)
	}
	// RFC 9110 §7.8: a sender of Upgrade (a 426's, say) lists it among the connection options,
	// so that intermediaries do not forward it.
	upgrade := cx.HasField("Upgrade")
	switch {
	case close:
		b = append(b, "Connection: close"...)
		cx.Resp |= serve.RfClose // the head says so: the connection decides after it (Socket.EndRequest)
	case !http11:
		b = append(b, "Connection: keep-alive"...)
	case upgrade:
		b = append(b, "Connection: Upgrade\r\n"...)
	}
	if close || !http11 {
		if upgrade {
			b = append(b, ", Upgrade"...)
		}
		b = append(b, serve.CRLF...)
	}
	b = append(b, serve.CRLF...)
	chunkedBody := cx.Resp&serve.RfChunked != 0 && buffered > 0
	if chunkedBody {
		b = wire.AppendChunkSize(b, buffered) // the body held so far becomes the first chunk
	}
	c.Out.FillHead(pool, b)
	if chunkedBody {
		c.Out.Write(pool, serve.CRLF)
	}
	cx.Resp |= serve.RfCommitted
}

// SendInterim queues an interim response ahead of the final one (RFC 9110 §15.2): its status line
// and the fields set so far, written at once.
func (c *conn) SendInterim(cx *serve.Ctx, code int) {
	if cx.ReqFlags&serve.ReqHTTP11 == 0 || c.State == serve.StClosed {
		return // RFC 9110 §15.2: a server MUST NOT send a 1xx response to an HTTP/1.0 client
	}
	pool := &cx.Loop.Pool
	b := wire.AppendStatusLine(pool.Get(cx.FieldLinesRoom()+64), code)
	b = cx.AppendFieldLines(b)
	b = append(b, serve.CRLF...)
	c.Out.InsertBeforeHead(pool, b)
	pool.Put(b)
	c.Flush()
}

// QueueTrailers queues the last chunk of a chunked body and the trailer section after it. (Out
// of CompleteResponse's frame, which every parked request's stack may hold.)
//
//go:noinline
func (c *conn) QueueTrailers(cx *serve.Ctx) {
	if cx.Resp&serve.RfChunked != 0 {
		b := appendTrailerLines(cx.Loop.Scratch[:0], cx)
		c.Out.Write(&cx.Loop.Pool, b)
		cx.Loop.Scratch = b[:0]
	}
}

// appendTrailerLines appends the trailer section of cx's chunked body: the last chunk, the
// fields, the empty line.
func appendTrailerLines(b []byte, cx *serve.Ctx) []byte {
	b = append(b, "0\r\n"...)
	t := cx.Extra.Rare.TrailerSet
	for i := 0; i < len(t); i += 2 {
		b = append(b, t[i]...)
		b = append(b, ": "...)
		b = append(b, t[i+1]...)
		b = append(b, serve.CRLF...)
	}
	return append(b, serve.CRLF...)
}

// WaitWritable parks the handler cx until the socket takes more output, for a write that goes
// on from the handler's own buffer (see Ctx.send). The write timeout watches the wait.
func (c *conn) WaitWritable(cx *serve.Ctx) error {
	c.SetInterest(c.Events() | netpoll.WatchWrite)
	c.ArmWriteDeadline()
	return cx.ParkOnConn(serve.ParkWrite)
}

// waitReadable parks the handler cx until body bytes arrive, with the progress-based body
// timeout.
func (c *conn) waitReadable(cx *serve.Ctx) error {
	c.SetInterest(c.Events() | netpoll.WatchRead | netpoll.WatchHangup)
	return c.AwaitInput(cx)
}

// onDeadline runs when the connection's timer is due: it acts on whichever deadline has passed.
func (c *conn) onDeadline(l *serve.Loop) {
	switch c.Due(l.Clk.Now) {
	case serve.DueWrite:
		c.WriteTimedOut(c)
		return
	case serve.DueRead:
		switch c.State {
		case serve.StHead:
			c.reject(wire.ErrHeaderTimeout)
			c.Settle()
		case serve.StHandler:
			c.ReadTimedOut()
		case serve.StHandedOver:
			hc := c.Handed()
			hc.CallProtocol(hc.ProtocolTimeout)
		default:
			c.Close(nil)
		}
	}
	if c.State != serve.StClosed {
		c.Rearm()
	}
}

// HandOver hands the connection over to p, after its 101 response when the status is 101, or
// after nothing (a raw takeover); see Ctx.HandOver.
func (c *conn) HandOver(cx *serve.Ctx, p any) (*serve.Conn, error) {
	switch {
	case !cx.Body.Complete():
		return nil, serve.ErrHandOverBody
	case cx.Resp&serve.RfCommitted != 0 || cx.Written != 0:
		return nil, serve.ErrHandOverResponse
	case cx.Status != 0 && cx.Status != 101:
		return nil, serve.ErrHandOverResponse
	}
	if cx.Status == 101 {
		c.writeSwitch(cx)
	}
	cx.Resp |= serve.RfFinished
	cx.DropResponseFields()
	return c.HandOverTo(p, cx.Gone == 0), nil
}

// writeSwitch queues the 101 response of a protocol switch: the status line, Date, the
// handler's fields (Upgrade among them) and Connection: Upgrade, which RFC 9110 §7.8 requires
// of a 101 and which, like every Connection value, is the server's to write; nothing else (RFC
// 9110 §15.2.2: the switch happens right after its empty line).
func (c *conn) writeSwitch(cx *serve.Ctx) {
	pool := &cx.Loop.Pool
	b := c.Out.Spare(pool, 128+cx.FieldLinesRoom())
	b = wire.AppendStatusLine(b, 101)
	if cx.Resp&serve.RfHasDate == 0 {
		b = append(b, "Date: "...)
		b = append(b, cx.Loop.Clk.Date[:]...)
		b = append(b, serve.CRLF...)
	}
	b = cx.AppendFieldLines(b)
	b = append(b, "Connection: Upgrade\r\n\r\n"...)
	c.Out.Filled(pool, b)
	cx.Resp |= serve.RfCommitted
}
