package http2

import (
	"crypto/tls"
	"io"
	"net/netip"

	"github.com/dwellhttp/dwell/core/internal/serve"
)

// A stream as its request's exchange (exchange.go): what the Ctx asks of it.

func (s *h2stream) Base() *serve.Carrier { return &s.Carrier }

// ReadBody moves what has arrived of the request body into p, parking the handler until some
// arrives (ErrReadAgain), with the progress-based body timeout. A body without a
// Content-Length ends with the stream (io.EOF); one with a length ends when it has come whole,
// and a stream that ends before is a cut body.
func (s *h2stream) ReadBody(cx *serve.Ctx, p []byte) (int, error) {
	b := &cx.Body
	if err := s.BodyGone(cx); err != nil {
		return 0, err
	}
	if b.Kind == serve.BodyLength {
		p = p[:min(int64(len(p)), b.Remaining)]
	}
	if n := s.take(p); n > 0 {
		if b.Remaining >= 0 {
			if int64(n) > b.Remaining {
				return 0, serve.ErrBodyTooLarge // past the limit of a body without a length
			}
			b.Remaining -= int64(n)
		}
		return n, nil
	}
	if s.remoteEnd {
		if b.Kind == serve.BodyStream {
			b.EOF = true
			return 0, io.EOF
		}
		return 0, io.ErrUnexpectedEOF
	}
	if !cx.InHandler() {
		return 0, serve.ErrReadBodyRefused
	}
	if err := s.AwaitInput(cx); err != nil {
		return 0, err
	}
	return 0, serve.ErrReadAgain
}

// HasInput reports whether DATA (or the stream's end) has arrived that the handler has not read.
func (s *h2stream) HasInput() bool { return len(s.rbuf) > s.roff || s.remoteEnd }

// SendContinue answers Expect: 100-continue with a 100 HEADERS frame, unless DATA has come
// anyway.
func (s *h2stream) SendContinue() {
	if s.State != serve.StClosed && len(s.rbuf) == 0 {
		s.SendInterim(s.Ctx, 100)
	}
}

// WatchInput has nothing to do: the stream's DATA wakes a handler waiting for its body (receive).
func (s *h2stream) WatchInput() {}

// EndRequest ends the stream's request once its handler (or continuation) has finished: the
// response is completed, the completion hooks run, the Ctx goes back to the loop, and the
// stream ends once its output is out — with RST_STREAM if the response was aborted.
func (s *h2stream) EndRequest() {
	cx := s.Ctx
	if s.isHanded() {
		// The stream is a Protocol's: the request's end concerns the request alone.
		cx.RunDone()
		cx.Recycle()
		s.freeCtx()
		return
	}
	cx.CompleteResponse()
	if cx.Resp&serve.RfAbort != 0 {
		s.Ending = serve.CloseReset
	}
	cx.Resp |= serve.RfFinished // what a completion hook writes would follow the response on the wire
	cx.RunDone()
	cx.Recycle()
	s.freeCtx()
	s.CloseAfterOutput(false)
}

// StartNext: a stream serves one request.
func (s *h2stream) StartNext() *serve.Ctx { return nil }

// GoOn lets the stream go on after its handler ran: a handed-over stream reads what has
// arrived, and the queued output is framed. A stream that waited for a place among the
// handlers (h2conn.startWaiting) starts its handler here.
func (s *h2stream) GoOn() {
	if !s.waits && s.State == serve.StHandler && s.Ctx != nil && s.Ctx.State == serve.CtxIdle {
		h2start{s, s.Serial}.run()
		return
	}
	s.readHandedStream()
	s.settle()
}

// freeCtx gives the request's Ctx back to the loop, and the stream too if it is over.
func (s *h2stream) freeCtx() {
	if s.DropCtx() {
		s.recycle()
	}
}

// CloseAfterOutput ends the stream once its queued output is framed (linger is a socket's
// concern: a stream's client still sending is drained by finish).
func (s *h2stream) CloseAfterOutput(bool) {
	if s.State == serve.StClosed {
		return
	}
	s.State = serve.StClosing
	s.ReadDeadline = 0
	if s.Out.Size() == 0 {
		s.Close(nil)
	}
}

// close ends the stream (finish) and releases what it holds. A handler still running or parked
// on it is woken with err and finishes on its own; its Ctx goes back to the pool when it does.
func (s *h2stream) Close(err error) {
	if s.State == serve.StClosed {
		return
	}
	handed := s.isHanded()
	s.State = serve.StClosed
	s.Loop.Timers.Stop(&s.Timer)
	s.finish()
	s.Out.Release(&s.Loop.Pool, 0)
	if handed {
		hc := s.hc
		s.hc = nil
		hc.ClosedBy(err)
	}
	if s.WakeOnClose(err) {
		s.recycle()
	}
}

// onDeadline runs when the stream's timer is due: it acts on whichever deadline has passed.
func (s *h2stream) onDeadline(l *serve.Loop) {
	switch s.Due(l.Clk.Now) {
	case serve.DueWrite:
		s.WriteTimedOut(s)
	case serve.DueRead:
		switch s.State {
		case serve.StHandler:
			s.ReadTimedOut()
		case serve.StHandedOver:
			hc := s.hc
			hc.CallProtocol(hc.ProtocolTimeout)
		default:
			s.Close(nil)
		}
	}
	if s.State != serve.StClosed {
		s.Rearm()
	}
}

// What a request may ask of its stream: the rest is its connection's.

func (s *h2stream) RemoteAddr() netip.AddrPort {
	if s.State == serve.StClosed {
		return netip.AddrPort{}
	}
	return s.h.c.RemoteAddr()
}

func (s *h2stream) TLSState() *tls.ConnectionState { return s.h.c.TLSState() }

func (s *h2stream) Proto() string { return "HTTP/2.0" }

func (s *h2stream) ConnectProtocol() string { return s.protocol }

// HandOver hands the stream of an extended CONNECT over to p: its HEADERS go out without ending
// it, and its DATA is p's from now on (see Ctx.HandOver). Any other stream's connection is not
// the request's to give.
func (s *h2stream) HandOver(cx *serve.Ctx, p any) (*serve.Conn, error) {
	switch {
	case s.protocol == "":
		return nil, serve.ErrHandOverHTTP2
	case cx.Resp&serve.RfCommitted != 0 || cx.Written != 0:
		return nil, serve.ErrHandOverResponse
	case cx.Status != 0 && (cx.Status < 200 || cx.Status > 299):
		return nil, serve.ErrHandOverTunnel
	}
	s.writeTunnelHead(cx)
	cx.Resp |= serve.RfFinished
	cx.DropResponseFields()
	hc := &serve.Conn{Exchange: s, Proto: p, Serial: s.Serial}
	s.hc = hc
	s.State = serve.StHandedOver
	s.ReadDeadline = 0
	if cx.Gone == 0 {
		s.Loop.Pending = append(s.Loop.Pending, s) // what has arrived goes to p once the turn is over
	}
	return hc, nil
}

// isHanded reports whether the stream has been handed over and is not closed yet (it may be
// closing).
func (s *h2stream) isHanded() bool { return s.hc != nil && s.hc.Serial == s.Serial }
