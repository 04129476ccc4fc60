package core

import (
	"crypto/tls"

	"github.com/dwellhttp/dwell/core/internal/h2"
	"github.com/dwellhttp/dwell/core/internal/netpoll"
	"github.com/dwellhttp/dwell/internal/alias"
)

// An HTTP/2 stream is a request. Its Ctx is served exactly as an HTTP/1.1 request's is, on a
// conn of its own: one with no socket, whose transport (h2T) carries its bytes as frames of its
// HTTP/2 connection — its reads take the DATA that arrived for it, its writes become DATA
// frames within the flow-control windows, its close ends the stream. So everything built on a
// connection — the body reads and their timeout, the response's buffering and streaming, the
// high-water mark that parks a writer, the write timeout, completion, the wake of a parked
// handler whose client left — works on a stream unchanged, and a stream whose client stops
// reading parks its own handler without holding up the others.

// An h2stream is one stream. Its conn comes first, so that the conn's timer is the stream's too
// (see timer) and the conn finds its stream (conn.stream).
type h2stream struct {
	c       conn // no socket: c.fd is -1
	h       *h2conn
	id      uint32
	st      h2.StreamState
	sendWin h2.SendWindow
	recvWin h2.RecvWindow

	rbuf      []byte // DATA received and not read yet: rbuf[roff:], from the loop's pool
	roff      int
	got       int64  // DATA bytes received, held against the request's Content-Length
	declared  int64  // the request's Content-Length, -1 when none
	remoteEnd bool   // the client ended its side
	ended     bool   // the server ended its side (END_STREAM or RST_STREAM sent)
	rst       bool   // RST_STREAM sent or received: nothing more goes either way
	draining  bool   // the response is complete and the client still sends (h2T.close)
	drained   int64  // DATA dropped while draining
	blocked   bool   // in h.blocked
	released  bool   // the stream is over; it goes back to the loop once no Ctx holds its conn
	trailers  []byte // the response's trailers, encoded, which end the stream (setTrailers)

	protocol string // an extended CONNECT's :protocol (RFC 8441), or ""
	hc       *Conn  // the Protocol's side, once an extended CONNECT has handed the stream over
}

// Streams are the loop's, reused: a stream goes back once it is over and its conn is no Ctx's
// — a handler still under way when its stream was reset holds the conn until it returns
// (conn.freeCtx), and finds it closed, never another stream.

// getStream takes a stream from the loop's pool, or makes one.
func (l *Loop) getStream() *h2stream {
	if n := len(l.h2free); n > 0 {
		s := l.h2free[n-1]
		l.h2free[n-1] = nil
		l.h2free = l.h2free[:n-1]
		*s = h2stream{}
		return s
	}
	return &h2stream{}
}

// recycle gives a released stream back to the loop once its conn is closed and no Ctx's. The
// stream stays as it is, closed, until getStream takes it: its closer may still be reading it.
func (s *h2stream) recycle() {
	c := &s.c
	if !s.released || c.state != stClosed || c.cx != nil {
		return
	}
	s.released = false // once
	s.h = nil          // nothing more of the connection is kept alive by the pool
	if l := c.l; len(l.h2free) < h2StreamPoolMax {
		l.h2free = append(l.h2free, s)
	}
}

// h2StreamPoolMax bounds the idle streams a loop keeps.
const h2StreamPoolMax = 1024

// stream returns the stream a conn is (c.isStream): its conn is its first field, at offset 0
// (TestTimerOwnersFirst), and a stream's conn is never anything else's.
func (c *conn) stream() *h2stream { return alias.Outer[h2stream](c) }

// isStream reports whether c is an HTTP/2 stream rather than a connection: it has no descriptor.
func (c *conn) isStream() bool { return c.fd < 0 }

// startStream makes the request whose head the loop's builder holds that of new stream id. Its
// handler starts once the frames that arrived with its head are handled (h2conn.Receive): a
// stream's DATA, a reset or a window update that came along are known to it from the start.
func (h *h2conn) startStream(id uint32, end bool, protocol string) {
	l := h.l
	pc := h.hc.c
	h.calm.Give(h2.CalmPerStream)
	if len(h.streams) == 0 {
		h.hc.c.setReadDeadline(0) // not idle: the streams keep deadlines of their own
	}
	s := l.getStream()
	s.h, s.id, s.declared, s.protocol = h, id, -1, protocol
	s.c.fd = -1
	s.st = h2.StateOpen
	if end {
		s.st = h2.StateHalfClosedRemote
	}
	s.remoteEnd = end
	s.sendWin = h2.SendWindow(h.peerWindow)
	s.recvWin = h2.NewRecvWindow(h2StreamWindow)
	h.streams[id] = s
	l.serial++
	c := &s.c
	c.serial, c.l, c.via = l.serial, l, pc.via
	c.tm.Init(timerConn)

	cx := l.getCtx(c)
	r := &cx.req
	b := &l.h2head
	if rej := b.Finish(r, l.opts.AllowCONNECT); rej != nil {
		r.Arena = nil
		l.putCtx(cx)
		s.c.state = stClosed
		h.answer(id, rej.Status)
		s.ended = true
		s.release()
		return
	}
	if end && r.ContentLength > 0 {
		r.Arena = nil
		l.putCtx(cx)
		s.c.state = stClosed
		s.reset(h2.ProtocolError) // a body declared and none sent: malformed (RFC 9113 §8.1.1)
		s.release()
		return
	}
	s.declared = r.ContentLength
	if countStats {
		l.ctr.requests++
	}
	head := r.Arena
	fields := b.Fields
	cx.body.begin(l, r)
	if !end && cx.body.kind == bodyNone && r.ContentLength < 0 {
		cx.body.kind = bodyStream
		cx.body.remaining = -1 // no limit left to count down, unless there is one
		if max := l.opts.MaxBodyBytes; max > 0 {
			cx.body.remaining = max
		}
	}
	r.Adopt(&l.pool.Pool, head, fields, r.ScratchNeeded())
	r.DecodePath()
	l.h2headBuf, l.fields = head[:0], fields[:0] // kept as grown, for the next head

	c.state = stHandler
	c.cx = cx
	cx.begin()
	cx.reqf |= reqHTTP2
	h.starting = append(h.starting, h2start{s, c.serial})
}

// An h2start is a stream whose handler is to start, and the serial of its conn then: a stream
// that ended meanwhile may serve another already.
type h2start struct {
	s      *h2stream
	serial uint32
}

// run runs the stream's handler, unless the stream ended before it could start.
func (st h2start) run() {
	s := st.s
	c := &s.c
	if c.serial != st.serial || c.state != stHandler || c.cx == nil || c.cx.state != ctxIdle {
		return
	}
	c.l.turnLeft = maxPipelined
	c.run(c.cx, nil, nil)
	c.settle()
}

// receive takes DATA that arrived for the stream (end: the client ended its side), and wakes
// its handler if it waits for it. What goes past the request's Content-Length, or ends short of
// it, makes the request malformed (RFC 9113 §8.1.1).
func (s *h2stream) receive(data []byte, end bool) error {
	s.got += int64(len(data))
	if s.declared >= 0 && (s.got > s.declared || end && s.got != s.declared) {
		s.h.consumed(uint32(len(data)))
		return &h2.StreamError{StreamID: s.id, Code: h2.ProtocolError, Reason: "DATA other than the request's Content-Length"}
	}
	if end {
		s.remoteEnd = true
	}
	cx := s.c.cx
	handed := s.c.state == stHandedOver // its DATA is a Protocol's (handOverStream)
	switch {
	case len(data) == 0:
	case s.draining || cx == nil && !handed:
		// No handler reads it any more: counted as read.
		s.h.consumed(uint32(len(data)))
		s.consumed(uint32(len(data)))
	case !handed && cx.body.kind == bodyNone:
		s.h.consumed(uint32(len(data)))
		return &h2.StreamError{StreamID: s.id, Code: h2.ProtocolError, Reason: "DATA on a request that ended with its head"}
	default:
		pool := &s.c.l.pool
		if len(s.rbuf) == 0 {
			s.rbuf, s.roff = pool.Get(len(data)), 0
		} else if cap(s.rbuf)-len(s.rbuf) < len(data) {
			nb := append(pool.Get(len(s.rbuf)-s.roff+len(data)), s.rbuf[s.roff:]...)
			pool.Put(s.rbuf)
			s.rbuf, s.roff = nb, 0
		}
		s.rbuf = append(s.rbuf, data...)
	}
	if s.draining {
		s.drained += int64(len(data))
		if s.remoteEnd || s.drained > drainMax {
			s.endDrain()
		}
		return nil
	}
	if handed {
		// A stream has no readiness of its own: its turn in the loop's pending list reads it.
		s.c.l.pending = append(s.c.l.pending, &s.c)
		return nil
	}
	if s.c.state == stHandler && cx != nil && (cx.parkedOn(parkRead) || cx.parkedOn(parkBody)) {
		cx.wake(nil)
	}
	return nil
}

// readHandedStream gives a handed-over stream's Protocol the DATA that has arrived for it, in
// the loop buffer as a connection's input is given (readHandedOver), until none is left — or
// the protocol pauses, or its output is over the mark — and the client's END_STREAM as the end
// of its input. What the protocol has not read is not counted as read: the stream's window
// holds the client back.
func (c *conn) readHandedStream() {
	s := c.stream()
	for c.state == stHandedOver && (len(s.rbuf) > s.roff || s.remoteEnd) {
		if hc := c.handed(); hc.paused {
			hc.unread = true // ResumeReading reads it
			return
		}
		if c.heldBack || c.outputBlocked() {
			c.heldBack = true // afterSend reads it once the client has taken enough
			return
		}
		c.readHandedOver()
	}
}

// consumed gives n bytes of the stream's window back once they are read.
func (s *h2stream) consumed(n uint32) {
	if inc := s.recvWin.Consume(n); inc > 0 && !s.remoteEnd {
		s.h.queue(h2.AppendWindowUpdate(s.c.l.h2scratch[:0], s.id, inc))
	}
}

// reset ends the stream with RST_STREAM code: its handler, if it still runs, sees the client gone.
func (s *h2stream) reset(code h2.ErrCode) {
	s.sendRST(code)
	s.end()
}

// sendRST sends RST_STREAM code, unless one went either way already.
func (s *h2stream) sendRST(code h2.ErrCode) {
	if !s.rst && !s.h.closed {
		s.h.queue(h2.AppendRSTStream(s.c.l.h2scratch[:0], s.id, code))
	}
	s.rst, s.ended = true, true
}

// peerReset: the client reset the stream.
func (s *h2stream) peerReset() {
	s.rst, s.ended, s.remoteEnd = true, true, true
	s.end()
}

// end closes the stream's conn, which releases the stream — or releases a stream whose conn has
// closed already, draining.
func (s *h2stream) end() {
	if s.c.state != stClosed {
		s.c.close(ErrClosed)
	} else if s.draining {
		s.release()
	}
}

// endDrain ends a drain: the client has ended the request, or sent more than is worth reading,
// and is told to stop (RST_STREAM NO_ERROR, RFC 9113 §8.1).
func (s *h2stream) endDrain() {
	if !s.remoteEnd {
		s.sendRST(h2.NoError)
	}
	s.release()
}

// writable lets a stream waiting to send go on: its queue is written, or its parked writer woken.
func (s *h2stream) writable() {
	c := &s.c
	if c.state == stClosed {
		return
	}
	c.flush()
}

// dropBody gives back what the stream holds of the request body, unread: counted as read.
func (s *h2stream) dropBody() {
	if s.rbuf == nil {
		return
	}
	if unread := len(s.rbuf) - s.roff; unread > 0 {
		s.h.consumed(uint32(unread))
		s.consumed(uint32(unread))
	}
	s.c.l.pool.Put(s.rbuf)
	s.rbuf, s.roff = nil, 0
}

// setTrailers encodes the response's trailers, to end the stream once its body is sent.
func (s *h2stream) setTrailers(cx *Ctx) {
	s.trailers = cx.appendTrailerBlock(s.c.l.pool.Get(256))
}

// release forgets the stream once it has closed (and drained).
func (s *h2stream) release() {
	if s.trailers != nil {
		s.c.l.pool.Put(s.trailers)
		s.trailers = nil
	}
	s.draining = false
	s.dropBody()
	h := s.h
	if s.blocked {
		s.blocked = false
		for i, b := range h.blocked {
			if b == s {
				n := copy(h.blocked[i:], h.blocked[i+1:])
				h.blocked[i+n] = nil
				h.blocked = h.blocked[:i+n]
				break
			}
		}
	}
	s.released = true
	h.streamEnded(s)
	s.recycle()
}

// h2T is the transport of a stream's conn.
type h2T struct{}

func (h2T) read(c *conn, p []byte) (int, netpoll.Errno) {
	s := c.stream()
	if n := len(s.rbuf) - s.roff; n > 0 {
		k := copy(p, s.rbuf[s.roff:])
		s.roff += k
		if s.roff == len(s.rbuf) {
			c.l.pool.Put(s.rbuf)
			s.rbuf, s.roff = nil, 0
		}
		s.h.consumed(uint32(k))
		s.consumed(uint32(k))
		return k, 0
	}
	if s.remoteEnd {
		return 0, 0
	}
	return 0, netpoll.EAGAIN
}

// writev frames the bytes as DATA, as many as the windows and the connection's queue allow. A
// frame may span the queue's buffers: how the handler's writes fell into them does not make
// the frames any smaller.
func (h2T) writev(c *conn, iov *netpoll.IOVecs, _ bool) (int, netpoll.Errno) {
	s := c.stream()
	left := 0
	for i := 0; i < iov.Len(); i++ {
		left += len(iov.At(i))
	}
	total := 0
	i, off := 0, 0 // the next byte to send: iov.At(i)[off]
	for left > 0 {
		n := s.room(left)
		if n == 0 {
			s.block()
			if total == 0 {
				if s.h.closed || s.ended {
					return 0, netpoll.ECONNRESET
				}
				return 0, netpoll.EAGAIN
			}
			return total, 0
		}
		s.dataHeader(n, false)
		for k := n; k > 0; {
			b := iov.At(i)[off:]
			b = b[:min(len(b), k)]
			s.h.queue(b)
			k -= len(b)
			if off += len(b); off == len(iov.At(i)) {
				i, off = i+1, 0
			}
		}
		left -= n
		total += n
	}
	return total, 0
}

// room returns how many of n bytes the stream may send in one DATA frame now.
func (s *h2stream) room(n int) int {
	h := s.h
	if h.closed || s.ended {
		return 0
	}
	pc := h.hc.c
	if pc.out.Size() >= int64(pc.l.opts.WriteHighWater) {
		return 0 // Drained, once the client has read half
	}
	// A frame is not cut to the few bytes left under the mark, which a stream writing as fast
	// as the client reads would meet at every turn, sending frames of a byte or two: the
	// queue may go past the mark by one frame of what the stream holds.
	return h.sendWin.Allows(s.sendWin.Allows(min(n, int(h.peerMaxFrame))))
}

// sendData queues one DATA frame, which room allowed.
func (s *h2stream) sendData(b []byte, end bool) {
	s.dataHeader(len(b), end)
	s.h.queue(b)
}

// dataHeader queues the header of a DATA frame of n bytes, which room allowed, and takes them
// from the windows; its payload is to follow.
func (s *h2stream) dataHeader(n int, end bool) {
	h := s.h
	s.sendWin.Take(n)
	h.sendWin.Take(n)
	h.calm.SentData(n)
	var hdr [h2.HeaderLen]byte
	fl := h2.Flags(0)
	if end {
		fl = h2.FlagEndStream
		s.ended = true
	}
	h.queue(h2.AppendHeader(hdr[:0], h2.Header{Length: uint32(n), Type: h2.TypeData, Flags: fl, StreamID: s.id}))
}

// block puts the stream in line for a window or room.
func (s *h2stream) block() {
	if !s.blocked && !s.h.closed {
		s.blocked = true
		s.h.blocked = append(s.h.blocked, s)
	}
}

func (h2T) sendfile(c *conn, f netpoll.File, off *int64, n int) (int, netpoll.Errno) {
	s := c.stream()
	k := s.room(n)
	if k == 0 {
		s.block()
		if s.h.closed || s.ended {
			return 0, netpoll.ECONNRESET
		}
		return 0, netpoll.EAGAIN
	}
	buf := c.l.pool.Get(k)[:k]
	defer c.l.pool.Put(buf)
	got, e := netpoll.Pread(f, buf, *off)
	if got <= 0 {
		if e == 0 {
			e = netpoll.EIO
		}
		return 0, e
	}
	s.sendData(buf[:got], false)
	*off += int64(got)
	return got, 0
}

func (h2T) shutdownWrite(*conn) {}

// close ends the stream: END_STREAM after a whole response, RST_STREAM CANCEL after a cut one
// (reset; a handler still under way, or output not sent: a write timeout, the connection's end). A client still
// sending the request of a complete response has its DATA read and dropped for a while, as an
// HTTP/1.1 connection drains an unread body, so that it is still held to the Content-Length
// and its windows, before it is told to stop (endDrain).
func (h2T) close(c *conn, reset bool) {
	s := c.stream()
	switch {
	case s.h.closed || s.rst:
	case reset || !s.ended && (c.cx != nil && c.cx.active() && !c.isHanded() || c.out.Size() > 0):
		s.sendRST(h2.Cancel) // cut: its handler is under way, or its output was never sent
	default:
		if s.trailers != nil && !s.ended {
			out := h2.AppendHeaders(c.l.h2scratch[:0], s.id, true, s.trailers, int(s.h.peerMaxFrame))
			c.l.h2scratch = out[:0]
			s.h.queue(out)
			s.ended = true
		}
		if !s.ended {
			s.sendData(nil, true)
		}
		s.h.completed++
		if !s.remoteEnd {
			if !s.h.goingAway {
				s.dropBody()
				s.draining = true
				return
			}
			s.sendRST(h2.NoError) // going away: the rest of the request is not waited for
		}
	}
	s.release()
}

func (h2T) holds(*conn) bool              { return false }
func (h2T) flushHeld(*conn) netpoll.Errno { return 0 }
func (h2T) handshaking(*conn) bool        { return false }
func (h2T) tlsState(c *conn) *tls.ConnectionState {
	pc := c.stream().h.hc.c
	return pc.tr().tlsState(pc)
}
