package engine

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"iter"
	"log/slog"
	"runtime/debug"
	"slices"

	"github.com/dwellhttp/dwell/core/internal/netpoll"
	"github.com/dwellhttp/dwell/internal/bufpool"
)

// TLS on the loop: a TLS is the transport of a loop's connections that speak TLS. Each
// connection gets a crypto/tls server Conn over a tlsConn, an in-memory net.Conn whose reads
// and writes are the socket's own, made without blocking:
//
//   - The handshake runs in a coroutine (iter.Pull) of its own, started by the connection's
//     first read and resumed by the reads that follow when the socket is readable. When the
//     handshake needs bytes the socket does not have, tlsConn.Read writes out the flight
//     written so far and yields back to the loop; the transport's read reports EAGAIN. The
//     coroutine ends with the handshake, so an established connection holds none.
//   - After the handshake, records are read on the caller's stack (the loop, or a handler
//     reading its body): when the socket has nothing, tlsConn.Read returns a temporary
//     net.Error, which crypto/tls passes on without making it sticky, keeping a partial
//     record in its buffer for the next read; the transport's read reports EAGAIN.
//   - Writes encrypt the plaintext the write queue hands the transport into records that
//     tlsConn.Write sends at once; what the socket does not take waits in tlsConn.out, and the
//     plaintext behind it is reported written only once the socket has taken it all, so the
//     write queue holds it meanwhile and watches for writability as for plaintext.
//
// crypto/tls keeps what it read past the plaintext the loop asked for (the rest of a record,
// whole records behind it): the poller cannot see that, so a connection whose last read
// filled the caller's buffer is listed (TLS.buffered) and read again at the end of the loop's
// event handling, as if readable, whenever it wants input (RunBuffered).
//
// The transport knows a connection by its descriptor, and what it needs of the connection
// above it — whether it is still open and wants input, and to have it read — by its Endpoint.
type TLS struct {
	opts     TLSOptions
	conns    []*tlsConn // by descriptor: the connections with TLS state
	buffered []*tlsConn // connections whose TLS layer may hold input (see above)
	spare    []*tlsConn
	scratch  []byte // plaintext gathered for one write, a file's bytes read for sendfile
	iov      netpoll.IOVecs

	handshakes // the handshakes' share of the loop's turns (tlsturn.go)
}

// TLSOptions are what a loop's TLS transport is made with.
type TLSOptions struct {
	Config *tls.Config
	Log    *slog.Logger // handshake failures (at Debug) and panics in the configuration's callbacks
	Loop   int          // the loop's number, for the log
	Clock  *Clock       // the loop's clock, read for the handshakes' budget
	Counts *Counts      // the loop's, where the transport counts bytes and handshakes
	// Poll is the loop's poller, through which the records are read and, once the handshake
	// is done, sent: by its receives and sends, for a socket it owns (an io_uring poller's; see
	// Conn.Register). Nil reads and writes the sockets themselves. The buffers of the records it
	// sends come from Pool, the loop's, and go back to it once each send has completed.
	Poll *netpoll.Poller
	Pool *bufpool.Pool

	// Plaintext, if set, is asked about the first bytes of a client that did not begin a TLS
	// handshake: it returns what to answer such a client (a protocol's own error, written
	// before the close), or nil to close at once.
	Plaintext func(first []byte) []byte
}

// An Endpoint is the connection above a descriptor's TLS: what the transport asks of it when
// input the poller cannot announce waits in the TLS layer, or a deferred handshake may go on.
type Endpoint interface {
	Closed() bool      // the connection is over: the transport leaves it alone
	WatchesRead() bool // the connection wants input now
	Readable()         // read the connection, as if its socket had reported input
}

// tlsBatch bounds the plaintext one Writev or Sendfile call encrypts: what waits in
// tlsConn.out when the socket is full is at most about this much. Its records fit the largest
// buffer a loop's pool keeps (64 KiB), which holds them while the poller sends them.
const tlsBatch = 64<<10 - 5*64

// NewTLS makes a loop's TLS transport.
func NewTLS(opts TLSOptions) *TLS { return &TLS{opts: opts} }

// A tlsConn is one connection's TLS state, and the net.Conn crypto/tls reads and writes.
type tlsConn struct {
	t  *TLS
	ep Endpoint
	fd int
	tc *tls.Conn

	// The handshake's coroutine, while it runs.
	next  func() (struct{}, bool)
	stop  func()
	yield func(struct{}) bool
	hsErr error
	hsEnd bool // the handshake has ended, well or not
	hsOK  bool // the handshake succeeded: records carry the connection's bytes

	out     []byte        // records the socket has not taken yet
	plain   int           // plaintext behind out (and flight) that the last write has not reported written
	werr    netpoll.Errno // the socket failed a write
	viaRing bool          // the records go out through the poller's sends (a socket it owns; tlsconn.go)
	flight  []byte        // records a send of the poller's holds until it completes

	drained  bool   // the socket had nothing more in this read (see Read)
	eof      bool   // the client's input has ended: close_notify or the end of TCP
	buffered bool   // listed in TLS.buffered
	maybe    bool   // the last read filled its buffer: crypto/tls may hold more input
	deferred bool   // its handshake waits for a later turn (tlsturn.go)
	alpn     string // the protocol the client chose by ALPN, once the handshake succeeded
}

// state returns fd's TLS state, made on the connection's first read.
func (t *TLS) state(fd int, ep Endpoint) *tlsConn {
	if fd < len(t.conns) && t.conns[fd] != nil {
		return t.conns[fd]
	}
	s := &tlsConn{t: t, ep: ep, fd: fd}
	s.tc = tls.Server(s, t.opts.Config)
	for s.fd >= len(t.conns) {
		t.conns = AppendDoubling(t.conns, nil)
	}
	t.conns[s.fd] = s
	return s
}

// lookup returns fd's TLS state, or nil before its first read.
func (t *TLS) lookup(fd int) *tlsConn {
	if fd < len(t.conns) {
		return t.conns[fd]
	}
	return nil
}

// handshake runs the handshake until it needs input the socket does not have (EAGAIN) or
// ends. A client that spoke plaintext gets what TLSOptions.Plaintext answers.
func (s *tlsConn) handshake() netpoll.Errno {
	if s.next == nil {
		s.next, s.stop = iter.Pull(s.runHandshake)
	}
	s.next()
	if !s.hsEnd {
		if e := s.flushOut(); e != 0 {
			return e
		}
		return netpoll.EAGAIN
	}
	s.next, s.stop = nil, nil
	s.flushOut() // the last flight, or the alert of a failure
	opts := &s.t.opts
	if s.hsErr != nil {
		if errors.Is(s.hsErr, io.EOF) || errors.Is(s.hsErr, io.ErrUnexpectedEOF) {
			if countStats {
				opts.Counts.TLSAbandoned++ // the client left
			}
		} else {
			if countStats {
				opts.Counts.TLSFailed++
			}
		}
		var rh tls.RecordHeaderError
		if errors.As(s.hsErr, &rh) && rh.Conn != nil && opts.Plaintext != nil {
			if answer := opts.Plaintext(rh.RecordHeader[:]); answer != nil {
				s.answerPlaintext(answer)
				return netpoll.ECONNRESET
			}
		}
		if opts.Log.Enabled(context.Background(), slog.LevelDebug) {
			opts.Log.Debug("dwell: TLS handshake failed", "remote", netpoll.RemoteAddr(s.fd), "err", s.hsErr)
		}
		return netpoll.ECONNRESET
	}
	if s.werr != 0 {
		return s.werr
	}
	s.hsOK = true
	s.viaRing = opts.Poll != nil && opts.Poll.Owns(s.fd)
	s.alpn = s.tc.ConnectionState().NegotiatedProtocol
	if countStats {
		opts.Counts.TLSDone++
	}
	return 0
}

// runHandshake is the handshake's coroutine.
func (s *tlsConn) runHandshake(yield func(struct{}) bool) {
	s.yield = yield
	defer func() {
		if r := recover(); r != nil { // from a callback of the configuration's
			s.hsErr = fmt.Errorf("dwell: panic in the TLS handshake: %v", r)
			s.t.opts.Log.Error("dwell: panic in the TLS handshake", "loop", s.t.opts.Loop, "panic", r,
				"stack", string(debug.Stack()))
		}
		s.yield = nil
		s.hsEnd = true
	}()
	s.hsErr = s.tc.Handshake()
}

// answerPlaintext tells a client that spoke plaintext to the TLS port what it did. Its
// request has most likely been read whole with the record header (crypto/tls reads what the
// socket has), so closing does not reset the connection under the answer.
func (s *tlsConn) answerPlaintext(answer []byte) {
	n, _ := netpoll.Write(s.fd, answer)
	s.wrote(n)
	netpoll.ShutdownWrite(s.fd)
}

// Protocol returns the protocol fd's client chose by ALPN, once its handshake has succeeded;
// "" before, or when it chose none.
func (t *TLS) Protocol(fd int) string {
	if s := t.lookup(fd); s != nil {
		return s.alpn
	}
	return ""
}

// Read gives the connection's plaintext, after the handshake, with the socket's conventions
// (EAGAIN when there is nothing yet; 0 bytes and no errno at the end of the client's input).
// ep is the connection above fd: its first read makes its TLS state. See TLS.
func (t *TLS) Read(fd int, ep Endpoint, p []byte) (int, netpoll.Errno) {
	s := t.state(fd, ep)
	s.drained = false
	if !s.hsOK {
		if s.hsEnd {
			return 0, netpoll.ECONNRESET
		}
		if e := t.handshake(s); e != 0 {
			return 0, e
		}
	}
	if s.eof {
		return 0, 0
	}
	k := 0
	var err error
	for k < len(p) && err == nil {
		var n int
		n, err = s.tc.Read(p[k:])
		k += n
	}
	s.maybe = err == nil
	if s.maybe {
		t.listBuffered(s)
	}
	if len(s.out) > 0 {
		s.flushOut() // what crypto/tls answered while reading (a KeyUpdate, an alert)
	}
	switch {
	case err == nil || err == errTLSAgain:
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		s.eof = true
	default:
		if k == 0 {
			var e netpoll.Errno
			if errors.As(err, &e) {
				return 0, e
			}
			return 0, netpoll.ECONNRESET // a record that failed to decrypt, a protocol error
		}
		s.eof = true // the next read ends the input; the conn closes on its own terms
	}
	if k > 0 {
		return k, 0
	}
	if s.eof {
		return 0, 0
	}
	return 0, netpoll.EAGAIN
}

// listBuffered lists s among the connections read again as if readable.
func (t *TLS) listBuffered(s *tlsConn) {
	if !s.buffered {
		s.buffered = true
		t.buffered = append(t.buffered, s)
	}
}

// WantsRead reports whether a listed connection waits for input the TLS layer may hold: the
// loop must not sleep in its poll then.
func (t *TLS) WantsRead() bool {
	for _, s := range t.buffered {
		if s.maybe && !s.ep.Closed() && s.ep.WatchesRead() {
			return true
		}
	}
	return false
}

// RunBuffered reads the listed connections that want input, as the poller would have them
// read if the TLS layer's buffer were the socket's.
func (t *TLS) RunBuffered() {
	if len(t.buffered) == 0 {
		return
	}
	list := t.buffered
	t.buffered = t.spare[:0]
	for i, s := range list {
		list[i] = nil
		s.buffered = false
		ep := s.ep
		if !s.maybe || ep.Closed() || t.lookup(s.fd) != s {
			continue
		}
		if !ep.WatchesRead() {
			t.listBuffered(s) // it will want input later
			continue
		}
		ep.Readable()
		if s.maybe && !ep.Closed() && t.lookup(s.fd) == s {
			// Not read after all — its output held back, its protocol paused, its handler
			// busy — and crypto/tls still holds its input, which no readiness of the socket
			// will announce: listed again, for when it wants input (WantsRead).
			t.listBuffered(s)
		}
	}
	t.spare = list[:0]
}

// Writev encrypts the plaintext of iov, up to tlsBatch bytes, and sends the records (at once,
// whatever more says: a record is sent whole).
func (t *TLS) Writev(fd int, iov *netpoll.IOVecs, more bool) (int, netpoll.Errno) {
	s := t.lookup(fd)
	if s == nil || !s.hsOK {
		return 0, netpoll.EPIPE // nothing but the handshake's own goes out before it is done
	}
	total := 0
	for i := range iov.Len() {
		total += len(iov.At(i))
	}
	if n, e, done := s.sendHeld(total); done {
		return n, e
	}
	var b []byte
	if iov.Len() == 1 {
		b = iov.At(0)
		b = b[:min(len(b), tlsBatch)]
	} else {
		if t.scratch == nil {
			t.scratch = make([]byte, tlsBatch)
		}
		k := 0
		for i := 0; i < iov.Len() && k < len(t.scratch); i++ {
			k += copy(t.scratch[k:], iov.At(i))
		}
		b = t.scratch[:k]
	}
	return s.encrypt(b)
}

// sendHeld writes the records waiting from an earlier write. done says the call ends with
// what it returns: the socket is still full (EAGAIN), or it has now taken the records and the
// plaintext behind them is reported written — as much of it as this call offers (offered
// bytes): a flush of the queue alone offers less than a handler's write that went on from
// its own buffer did, and the rest is reported to the call that offers it again.
func (s *tlsConn) sendHeld(offered int) (int, netpoll.Errno, bool) {
	if s.holds() {
		if e := s.flushOut(); e != 0 {
			return 0, e, true
		}
		if s.holds() {
			return 0, netpoll.EAGAIN, true
		}
	}
	if s.werr != 0 {
		return 0, s.werr, true
	}
	if s.plain > 0 {
		n := min(s.plain, offered)
		s.plain -= n
		return n, 0, true
	}
	return 0, 0, false // nothing held, or the TLS layer's own output: go on with the caller's
}

// Holds reports whether fd's TLS layer holds records the socket has not taken: the
// connection then watches for writability, and FlushHeld sends them when it can.
func (t *TLS) Holds(fd int) bool {
	s := t.lookup(fd)
	return s != nil && s.holds()
}

// FlushHeld writes the records waiting in fd's TLS layer, returning an errno other than 0 when
// the connection has failed.
func (t *TLS) FlushHeld(fd int) netpoll.Errno { return t.lookup(fd).flushOut() }

// encrypt writes b as records. When the socket does not take them all, b is reported written
// only once it has (sendHeld): the caller offers the same bytes again meanwhile.
func (s *tlsConn) encrypt(b []byte) (int, netpoll.Errno) {
	if s.viaRing && s.out == nil {
		s.out = s.t.opts.Pool.Get(sealedSize(len(b))) // one buffer for the records of b
	}
	if _, err := s.tc.Write(b); err != nil {
		return 0, netpoll.EPIPE
	}
	if s.werr != 0 {
		return 0, s.werr
	}
	if s.viaRing {
		if e := s.flushOut(); e != 0 { // the records just sealed go to the ring's send
			return 0, e
		}
	}
	if s.holds() {
		s.plain = len(b)
		return 0, netpoll.EAGAIN
	}
	return len(b), 0
}

// Sendfile reads up to n bytes of f from *off and sends them as records — the kernel cannot
// encrypt them — moving *off past what it sent.
func (t *TLS) Sendfile(fd int, f netpoll.File, off *int64, n int) (int, netpoll.Errno) {
	s := t.lookup(fd)
	if s == nil || !s.hsOK {
		return 0, netpoll.EPIPE
	}
	if k, e, done := s.sendHeld(n); done {
		*off += int64(k)
		return k, e
	}
	if t.scratch == nil {
		t.scratch = make([]byte, tlsBatch)
	}
	k, e := netpoll.Pread(f, t.scratch[:min(n, len(t.scratch))], *off)
	if e != 0 || k == 0 {
		return 0, e
	}
	k, e = s.encrypt(t.scratch[:k])
	*off += int64(k)
	return k, e
}

// ShutdownWrite ends the output with a close_notify alert, then the TCP stream.
func (t *TLS) ShutdownWrite(fd int) {
	if s := t.lookup(fd); s != nil && s.hsOK && s.werr == 0 && s.flight == nil {
		s.tc.CloseWrite()
		s.writeOut() // before the shutdown, with the socket's own write
	}
	netpoll.ShutdownWrite(fd)
}

// Close sends a close_notify alert, unless the close is an abort (or the handshake never
// finished), and releases the connection's TLS state with the socket; reset makes the close
// abortive (an RST). A handshake in progress is ended first: its coroutine returns.
func (t *TLS) Close(fd int, reset bool) {
	if s := t.lookup(fd); s != nil {
		if !s.hsEnd {
			if countStats {
				t.opts.Counts.TLSAbandoned++
			}
		}
		if s.stop != nil {
			s.stop()
			s.next, s.stop = nil, nil
		}
		if !reset && s.hsOK && s.werr == 0 && !s.holds() {
			s.tc.CloseWrite() // best effort: a full socket loses it
			s.writeOut()      // now, with the socket's own write: it closes next
		}
		s.out = nil
		s.flight = nil // the poller keeps it until its send, cancelled by the close, completes
		t.conns[s.fd] = nil
		t.forget(s)
		if s.buffered {
			i := slices.Index(t.buffered, s)
			t.buffered = slices.Delete(t.buffered, i, i+1)
			s.buffered = false
		}
	}
	if reset {
		netpoll.ResetOnClose(fd)
	}
	netpoll.Close(fd)
}

// State returns a copy of the TLS state of ep's connection on fd, or nil before its handshake
// has ended.
func (t *TLS) State(fd int, ep Endpoint) *tls.ConnectionState {
	s := t.lookup(fd)
	if s == nil || !s.hsOK || s.ep != ep {
		return nil
	}
	st := s.tc.ConnectionState()
	return &st
}

// Handshaking reports whether the handshake of ep's connection on fd is yet to end.
func (t *TLS) Handshaking(fd int, ep Endpoint) bool {
	s := t.lookup(fd)
	return s == nil || s.ep != ep || !s.hsEnd
}
