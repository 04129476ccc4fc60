package http2

import (
	"github.com/dwellhttp/dwell/core/internal/h2"
	"github.com/dwellhttp/dwell/core/internal/serve"
)

// An HTTP/2 stream is a request. Its Ctx is served exactly as an HTTP/1.1 request's is: the
// stream is its exchange, as a connection is an HTTP/1.1 request's (exchange.go), with a
// Carrier of its own — its write queue, its deadlines — whose bytes go out as frames of its
// HTTP/2 connection: its body reads take the DATA that arrived for it, its queued output leaves
// as DATA frames within the flow-control windows (h2send.go), its end is END_STREAM or
// RST_STREAM. So everything the Ctx does — the body reads and their timeout, the response's
// buffering and streaming, the high-water mark that parks a writer, the write timeout,
// completion, the wake of a parked handler whose client left — works on a stream unchanged, and
// a stream whose client stops reading parks its own handler without holding up the others.

// An h2stream is one stream. Its Carrier comes first, so that the Carrier's timer is the
// stream's (see timer).
type h2stream struct {
	serve.Carrier
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
	draining  bool   // the response is complete and the client still sends (finish)
	drained   int64  // DATA dropped while draining
	blocked   bool   // in h.blocked
	released  bool   // the stream is over; it goes back to the loop once no Ctx holds it
	lingers   bool   // released while its handler was under way: one of h.lingering
	waits     bool   // opened while the handlers' places were taken: one of h.waiting
	trailers  []byte // the response's trailers, encoded, which end the stream (setTrailers)

	protocol string      // an extended CONNECT's :protocol (RFC 8441), or ""
	hc       *serve.Conn // the Protocol's side, once an extended CONNECT has handed the stream over
}

// Streams are the loop's, reused: a stream goes back once it is over and it is no Ctx's — a
// handler still under way when its stream was reset holds the stream until it returns
// (freeCtx), and finds it closed, never another stream: a Ctx's exchange changes only when the
// Ctx is given back.

// getStream takes a stream from the loop's pool, or makes one.
func getStream(l *serve.Loop) *h2stream {
	if n := len(h2loop(l).h2free); n > 0 {
		s := h2loop(l).h2free[n-1]
		h2loop(l).h2free[n-1] = nil
		h2loop(l).h2free = h2loop(l).h2free[:n-1]
		*s = h2stream{}
		return s
	}
	return &h2stream{}
}

// recycle gives a released stream back to the loop once it is closed and no Ctx's. The stream
// stays as it is, closed, until getStream takes it: its closer may still be reading it.
func (s *h2stream) recycle() {
	if !s.released || s.State != serve.StClosed || s.Ctx != nil {
		return
	}
	s.released = false // once
	if s.lingers {
		s.lingers = false
		s.h.lingering--
		s.Loop.EndLinger()
		s.h.startWaiting() // its place is free
	}
	s.h = nil // nothing more of the connection is kept alive by the pool
	if l := s.Loop; len(h2loop(l).h2free) < h2StreamPoolMax {
		h2loop(l).h2free = append(h2loop(l).h2free, s)
	}
}

// h2StreamPoolMax bounds the idle streams a loop keeps.
const h2StreamPoolMax = 1024

// startStream makes the request whose head the loop's builder holds that of new stream id. Its
// handler starts once the frames that arrived with its head are handled (h2conn.Receive): a
// stream's DATA, a reset or a window update that came along are known to it from the start.
func (h *h2conn) startStream(id uint32, end bool, protocol string) {
	l := h.c.Loop
	h.calm.Give(h2.CalmPerStream)
	if len(h.streams) == 0 {
		h.c.SetReadDeadline(0) // not idle: the streams keep deadlines of their own
	}
	s := getStream(l)
	s.h, s.id, s.declared, s.protocol = h, id, -1, protocol
	s.st = h2.StateOpen
	if end {
		s.st = h2.StateHalfClosedRemote
	}
	s.remoteEnd = end
	s.sendWin = h2.SendWindow(h.peerWindow)
	s.recvWin = h2.NewRecvWindow(h2StreamWindow)
	h.streams[id] = s
	l.Serial++
	s.Serial, s.Loop = l.Serial, l
	s.Timer.Init(serve.TimerStream)

	cx := l.GetCtx(s, &s.Carrier, h.c.Via)
	r := &cx.Req
	b := &h2loop(l).h2head
	if rej := b.Finish(r, l.Opts.AllowCONNECT); rej != nil {
		r.Arena = nil
		l.PutCtx(cx)
		s.State = serve.StClosed
		h.answer(id, rej.Status)
		s.ended = true
		s.release()
		return
	}
	if end && r.ContentLength > 0 {
		r.Arena = nil
		l.PutCtx(cx)
		s.State = serve.StClosed
		s.reset(h2.ProtocolError) // a body declared and none sent: malformed (RFC 9113 §8.1.1)
		s.release()
		return
	}
	s.declared = r.ContentLength
	if serve.CountStats {
		l.Ctr.Requests++
	}
	head := r.Arena
	fields := b.Fields
	cx.Body.Begin(l, r)
	if !end && cx.Body.Kind == serve.BodyNone && r.ContentLength < 0 {
		cx.Body.Kind = serve.BodyStream
		cx.Body.Remaining = -1 // no limit left to count down, unless there is one
		if max := l.Opts.MaxBodyBytes; max > 0 {
			cx.Body.Remaining = max
		}
	}
	r.Adopt(&l.Pool.Pool, head, fields, r.ScratchNeeded())
	r.DecodePath()
	h2loop(l).h2headBuf, l.Fields = head[:0], fields[:0] // kept as grown, for the next head

	s.State = serve.StHandler
	s.Ctx = cx
	cx.Begin()
	if h.waiting > 0 || h.handlers() > h2MaxStreams {
		s.waits = true // behind the streams waiting already, for a handler to return
		h.waiting++
		return
	}
	h.starting = append(h.starting, h2start{s, s.Serial})
}

// An h2start is a stream whose handler is to start, and its serial then: a stream that ended
// meanwhile may serve another already.
type h2start struct {
	s      *h2stream
	serial uint32
}

// run runs the stream's handler, unless the stream ended before it could start.
func (st h2start) run() {
	s := st.s
	if s.Serial != st.serial || s.State != serve.StHandler || s.Ctx == nil || s.Ctx.State != serve.CtxIdle {
		return
	}
	s.Loop.TurnLeft = serve.MaxPipelined
	s.Loop.RunHandler(s.Ctx, nil, nil)
	s.settle()
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
	cx := s.Ctx
	handed := s.State == serve.StHandedOver // its DATA is a Protocol's (HandOver)
	switch {
	case len(data) == 0:
	case s.draining || cx == nil && !handed:
		// No handler reads it any more: counted as read.
		s.h.consumed(uint32(len(data)))
		s.consumed(uint32(len(data)))
	case !handed && cx.Body.Kind == serve.BodyNone:
		s.h.consumed(uint32(len(data)))
		return &h2.StreamError{StreamID: s.id, Code: h2.ProtocolError, Reason: "DATA on a request that ended with its head"}
	default:
		pool := &s.Loop.Pool
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
		if s.remoteEnd || s.drained > serve.DrainMax {
			s.endDrain()
		}
		return nil
	}
	if handed {
		// A stream has no readiness of its own: its turn in the loop's pending list reads it.
		s.Loop.Pending = append(s.Loop.Pending, s)
		return nil
	}
	if s.State == serve.StHandler && cx != nil && (cx.ParkedOn(serve.ParkRead) || cx.ParkedOn(serve.ParkBody)) {
		cx.Wake(nil)
	}
	return nil
}

// readHandedStream gives a handed-over stream's Protocol the DATA that has arrived for it, in
// the loop buffer as a connection's input is given (conn.readHandedOver) — unless the protocol
// pauses, or its output is over the mark — and the client's END_STREAM as the end of its input.
// What the protocol does not take is not counted as read: it is given again with what arrives
// next, and the stream's window holds the client back meanwhile.
func (s *h2stream) readHandedStream() {
	if s.State != serve.StHandedOver || len(s.rbuf) == s.roff && !s.remoteEnd {
		return
	}
	if hc := s.hc; hc.Is(serve.HcPaused) {
		hc.Set(serve.HcUnread) // ResumeReading reads it
		return
	}
	if s.HeldBack || s.Out.Size() > s.HighWater() {
		s.HeldBack = true // AfterSend reads it once the client has taken enough
		return
	}
	l := s.Loop
	if in := l.Buf[:copy(l.Buf, s.rbuf[s.roff:])]; len(in) > 0 {
		hc := s.hc
		used := 0
		hc.CallProtocol(func() { used = hc.ProtocolReceive(in) })
		if s.State == serve.StClosed {
			return
		}
		used = min(max(used, 0), len(in))
		if used == 0 && len(in) >= h2StreamWindow {
			s.Close(serve.ErrInputFull) // the window is full: nothing more can come
			return
		}
		s.consume(used)
	}
	if s.Out.Size() > s.HighWater() {
		s.HeldBack = true
	}
	s.settle()
	if s.remoteEnd && s.State != serve.StClosed {
		s.Close(serve.ErrClosed) // the client ended its input: what it sent has been given, and answered
	}
}

// take moves what has arrived for the stream into p, as read.
func (s *h2stream) take(p []byte) int {
	n := copy(p, s.rbuf[s.roff:])
	s.consume(n)
	return n
}

// consume counts n bytes of what has arrived as read: they leave rbuf, and the windows get
// them back.
func (s *h2stream) consume(n int) {
	if n == 0 {
		return
	}
	s.roff += n
	if s.roff == len(s.rbuf) {
		s.Loop.Pool.Put(s.rbuf)
		s.rbuf, s.roff = nil, 0
	}
	s.h.consumed(uint32(n))
	s.consumed(uint32(n))
}

// consumed gives n bytes of the stream's window back once they are read.
func (s *h2stream) consumed(n uint32) {
	if inc := s.recvWin.Consume(n); inc > 0 && !s.remoteEnd {
		s.h.queue(h2.AppendWindowUpdate(h2loop(s.Loop).h2scratch[:0], s.id, inc))
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
		s.h.queue(h2.AppendRSTStream(h2loop(s.Loop).h2scratch[:0], s.id, code))
	}
	s.rst, s.ended = true, true
}

// peerReset: the client reset the stream.
func (s *h2stream) peerReset() {
	s.rst, s.ended, s.remoteEnd = true, true, true
	s.end()
}

// end closes the stream, which releases it — or releases a stream closed already, draining.
func (s *h2stream) end() {
	if s.State != serve.StClosed {
		s.Close(serve.ErrClosed)
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
	if s.State != serve.StClosed {
		s.Flush()
	}
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
	s.Loop.Pool.Put(s.rbuf)
	s.rbuf, s.roff = nil, 0
}

// release forgets the stream once it has closed (and drained).
func (s *h2stream) release() {
	if s.trailers != nil {
		s.Loop.Pool.Put(s.trailers)
		s.trailers = nil
	}
	s.draining = false
	s.dropBody()
	h := s.h
	if s.waits {
		s.waits = false // ended before its handler could start
		h.waiting--
	}
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
	if s.Ctx != nil && s.Ctx.Active() {
		s.lingers = true // its handler has not returned: it still counts against the stream limit
		h.lingering++
		s.Loop.Linger() // and against MaxConns
	}
	h.streamEnded(s)
	s.recycle()
}
