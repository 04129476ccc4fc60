package serve

import (
	"crypto/tls"
	"io"
	"net/netip"
)

// A stream as its request's exchange (exchange.go): what the Ctx asks of it.

func (s *h2stream) base() *carrier { return &s.carrier }

// readBody moves what has arrived of the request body into p, parking the handler until some
// arrives (errReadAgain), with the progress-based body timeout. A body without a
// Content-Length ends with the stream (io.EOF); one with a length ends when it has come whole,
// and a stream that ends before is a cut body.
func (s *h2stream) readBody(cx *Ctx, p []byte) (int, error) {
	b := &cx.body
	if err := s.bodyGone(cx); err != nil {
		return 0, err
	}
	if b.kind == bodyLength {
		p = p[:min(int64(len(p)), b.remaining)]
	}
	if n := s.take(p); n > 0 {
		if b.remaining >= 0 {
			if int64(n) > b.remaining {
				return 0, ErrBodyTooLarge // past the limit of a body without a length
			}
			b.remaining -= int64(n)
		}
		return n, nil
	}
	if s.remoteEnd {
		if b.kind == bodyStream {
			b.eof = true
			return 0, io.EOF
		}
		return 0, io.ErrUnexpectedEOF
	}
	if !cx.inHandler() {
		return 0, errReadBodyRefused
	}
	if err := s.awaitInput(cx); err != nil {
		return 0, err
	}
	return 0, errReadAgain
}

// hasInput reports whether DATA (or the stream's end) has arrived that the handler has not read.
func (s *h2stream) hasInput() bool { return len(s.rbuf) > s.roff || s.remoteEnd }

// sendContinue answers Expect: 100-continue with a 100 HEADERS frame, unless DATA has come
// anyway.
func (s *h2stream) sendContinue() {
	if s.state != stClosed && len(s.rbuf) == 0 {
		s.sendInterim(s.cx, 100)
	}
}

// watchInput has nothing to do: the stream's DATA wakes a handler waiting for its body (receive).
func (s *h2stream) watchInput() {}

// endRequest ends the stream's request once its handler (or continuation) has finished: the
// response is completed, the completion hooks run, the Ctx goes back to the loop, and the
// stream ends once its output is out — with RST_STREAM if the response was aborted.
func (s *h2stream) endRequest() {
	cx := s.cx
	if s.isHanded() {
		// The stream is a Protocol's: the request's end concerns the request alone.
		cx.runDone()
		cx.recycle()
		s.freeCtx()
		return
	}
	cx.completeResponse()
	if cx.resp&rfAbort != 0 {
		s.ending = closeReset
	}
	cx.resp |= rfFinished // what a completion hook writes would follow the response on the wire
	cx.runDone()
	cx.recycle()
	s.freeCtx()
	s.closeAfterOutput(false)
}

// startNext: a stream serves one request.
func (s *h2stream) startNext() *Ctx { return nil }

// goOn lets the stream go on after its handler ran: a handed-over stream reads what has
// arrived, and the queued output is framed.
func (s *h2stream) goOn() {
	s.readHandedStream()
	s.settle()
}

// freeCtx gives the request's Ctx back to the loop, and the stream too if it is over.
func (s *h2stream) freeCtx() {
	if s.dropCtx() {
		s.recycle()
	}
}

// closeAfterOutput ends the stream once its queued output is framed (linger is a socket's
// concern: a stream's client still sending is drained by finish).
func (s *h2stream) closeAfterOutput(bool) {
	if s.state == stClosed {
		return
	}
	s.state = stClosing
	s.rdl = 0
	if s.out.Size() == 0 {
		s.close(nil)
	}
}

// close ends the stream (finish) and releases what it holds. A handler still running or parked
// on it is woken with err and finishes on its own; its Ctx goes back to the pool when it does.
func (s *h2stream) close(err error) {
	if s.state == stClosed {
		return
	}
	handed := s.isHanded()
	s.state = stClosed
	s.l.timers.Stop(&s.tm)
	s.finish()
	s.out.Release(&s.l.pool)
	if handed {
		hc := s.hc
		s.hc = nil
		hc.closedBy(err)
	}
	if s.wakeOnClose(err) {
		s.recycle()
	}
}

// onDeadline runs when the stream's timer is due: it acts on whichever deadline has passed.
func (s *h2stream) onDeadline(l *Loop) {
	switch s.due(l.clk.Now) {
	case dueWrite:
		s.writeTimedOut(s)
	case dueRead:
		switch s.state {
		case stHandler:
			s.readTimedOut()
		case stHandedOver:
			hc := s.hc
			hc.callProtocol(func() { hc.p.Timeout(hc) })
		default:
			s.close(nil)
		}
	}
	if s.state != stClosed {
		s.rearm()
	}
}

// What a request may ask of its stream: the rest is its connection's.

func (s *h2stream) remoteAddr() netip.AddrPort {
	if s.state == stClosed {
		return netip.AddrPort{}
	}
	return s.h.c.remoteAddr()
}

func (s *h2stream) tlsState() *tls.ConnectionState { return s.h.c.tlsState() }

func (s *h2stream) proto() string { return "HTTP/2.0" }

func (s *h2stream) connectProtocol() string { return s.protocol }

// handOver hands the stream of an extended CONNECT over to p: its HEADERS go out without ending
// it, and its DATA is p's from now on (see Ctx.HandOver). Any other stream's connection is not
// the request's to give.
func (s *h2stream) handOver(cx *Ctx, p Protocol) (*Conn, error) {
	switch {
	case s.protocol == "":
		return nil, ErrHandOverHTTP2
	case cx.resp&rfCommitted != 0 || cx.written != 0:
		return nil, errHandOverResponse
	case cx.status != 0 && (cx.status < 200 || cx.status > 299):
		return nil, errHandOverTunnel
	}
	s.writeTunnelHead(cx)
	cx.resp |= rfFinished
	cx.dropResponseFields()
	hc := &Conn{ex: s, p: p, serial: s.serial}
	s.hc = hc
	s.state = stHandedOver
	s.rdl = 0
	if cx.gone == 0 {
		s.l.pending = append(s.l.pending, s) // what has arrived goes to p once the turn is over
	}
	return hc, nil
}

// isHanded reports whether the stream has been handed over and is not closed yet (it may be
// closing).
func (s *h2stream) isHanded() bool { return s.hc != nil && s.hc.serial == s.serial }
