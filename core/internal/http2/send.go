package http2

import (
	"github.com/dwellhttp/dwell/core/internal/engine"
	"github.com/dwellhttp/dwell/core/internal/h2"
	"github.com/dwellhttp/dwell/core/internal/netpoll"
	"github.com/dwellhttp/dwell/core/internal/serve"
)

// A stream's output: its write queue holds the response as an HTTP/1.1 connection's does, and
// what carries it to the client (streamSender) frames it as DATA, as much as the flow-control
// windows and the connection's queue allow, straight from the stream's queue into the
// connection's. A stream that may send nothing more for now waits in its connection's blocked
// list for a window or for room (h2conn.unblock).

// A streamSender is a stream as its write queue's engine.Sender: a conversion, never an
// allocation.
type streamSender h2stream

func (s *h2stream) Sender() engine.Sender { return (*streamSender)(s) }

// Writev frames the bytes as DATA, as many as the windows and the connection's queue allow. A
// frame may span the queue's buffers: how the handler's writes fell into them does not make
// the frames any smaller.
func (ss *streamSender) Writev(iov *netpoll.IOVecs, _ bool) (int, netpoll.Errno) {
	s := (*h2stream)(ss)
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

// Async reports that a stream's writes are done when they return: they go into its connection's
// queue.
func (*streamSender) Async() (engine.AsyncWriter, int) { return nil, 0 }

// Sendfile reads up to n bytes of f from *off as one DATA frame, as the windows allow.
func (ss *streamSender) Sendfile(f netpoll.File, off *int64, n int) (int, netpoll.Errno) {
	s := (*h2stream)(ss)
	k := s.room(n)
	if k == 0 {
		s.block()
		if s.h.closed || s.ended {
			return 0, netpoll.ECONNRESET
		}
		return 0, netpoll.EAGAIN
	}
	pool := &s.Loop.Pool
	buf := pool.Get(k)[:k]
	defer pool.Put(buf)
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

// room returns how many of n bytes the stream may send in one DATA frame now.
func (s *h2stream) room(n int) int {
	h := s.h
	if h.closed || s.ended {
		return 0
	}
	if pc := h.c; pc.Out.Size() >= int64(pc.Loop.Opts.WriteHighWater) {
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

// HighWater is the output a stream holds before its writer parks: a quarter of
// Options.WriteHighWater (16 KiB at least), so that what the streams of one connection hold
// for clients that do not read — each at its mark, until the write timeout resets it — stays
// within a quarter of SETTINGS_MAX_CONCURRENT_STREAMS marks.
func (s *h2stream) HighWater() int64 { return max(int64(s.Loop.Opts.WriteHighWater)/4, 16<<10) }

// flush writes the stream's queue as DATA, as far as the windows allow.
func (s *h2stream) Flush() {
	progressed, err := s.Out.Send(s.Sender(), s.Loop.IOV, &s.Loop.Pool, nil)
	if err != nil {
		s.Close(serve.ErrClosed)
		return
	}
	s.AfterSend(progressed)
}

// AfterSend goes on after DATA was (or was not) sent: see Carrier.Sent.
func (s *h2stream) AfterSend(progressed bool) {
	goOn, closeNow := s.Sent(s.HighWater(), progressed)
	if goOn {
		s.Loop.Pending = append(s.Loop.Pending, s)
	}
	if closeNow {
		s.Close(nil) // its output is out, and it was closing
		return
	}
	if s.State == serve.StHandedOver {
		s.hc.DrainedCheck()
	}
}

// UpdateInterest has nothing to do: a stream has no socket of its own to watch, and its queued
// output goes when the windows and the connection's queue let it (block).
func (s *h2stream) UpdateInterest() {}

// settle ends a turn of the stream's: its queued output is framed as far as it may be.
func (s *h2stream) settle() {
	if s.State != serve.StClosed && s.Out.Size() > 0 {
		s.Flush()
	}
}

// WaitWritable parks the handler cx until the stream may send more, for a write that goes on
// from the handler's own buffer (see Ctx.send). The write timeout watches the wait.
func (s *h2stream) WaitWritable(cx *serve.Ctx) error {
	s.ArmWriteDeadline()
	return cx.ParkOnConn(serve.ParkWrite)
}

// finish ends the stream as its close: END_STREAM after a whole response, RST_STREAM after a cut
// one (reset; a handler still under way, or output not sent: a write timeout, the connection's
// end) — CANCEL, or INTERNAL_ERROR when the stream's own code failed (CloseFailed). A client
// still sending the request of a complete response has its DATA read and dropped for a while,
// as an HTTP/1.1 connection drains an unread body, so that it is still held to the
// Content-Length and its windows, before it is told to stop (endDrain).
func (s *h2stream) finish() {
	switch {
	case s.h.closed || s.rst:
	case s.Ending == serve.CloseFailed:
		s.sendRST(h2.InternalError)
	case s.Ending == serve.CloseReset || !s.ended && (s.Ctx != nil && s.Ctx.Active() && !s.isHanded() || s.Out.Size() > 0):
		s.sendRST(h2.Cancel) // cut: its handler is under way, or its output was never sent
	default:
		if s.trailers != nil && !s.ended {
			out := h2.AppendHeaders(h2loop(s.Loop).h2scratch[:0], s.id, true, s.trailers, int(s.h.peerMaxFrame))
			h2loop(s.Loop).h2scratch = out[:0]
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
