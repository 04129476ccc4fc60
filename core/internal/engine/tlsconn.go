package engine

import (
	"io"
	"net"
	"time"

	"github.com/dwellhttp/dwell/core/internal/netpoll"
)

// A connection's TLS state as the net.Conn crypto/tls reads and writes (see TLS): reads through
// the loop's poller (of what its receives brought, for a socket it owns), and writes of the
// socket's own made without blocking or, after the handshake on a socket the poller owns, the
// poller's sends (sendOut).

// TLSWrite writes records to the socket; a test makes it take less.
var TLSWrite = netpoll.Write

// TLSSend starts the poller's send of records b to the socket fd, gathered in iov (the
// transport's); a test makes it send less, as a send cut short does.
var TLSSend = func(p *netpoll.Poller, fd int, iov *netpoll.IOVecs, b []byte) netpoll.Errno {
	iov.Reset()
	iov.Append(b)
	return p.Send(fd, iov, false)
}

// errTLSAgain is what tlsConn.Read returns after the handshake when the socket has no more
// bytes: a temporary error, which crypto/tls does not keep.
var errTLSAgain error = tlsAgain{}

type tlsAgain struct{}

func (tlsAgain) Error() string   { return "dwell: TLS read would block" }
func (tlsAgain) Timeout() bool   { return true }
func (tlsAgain) Temporary() bool { return true }

// Read reads from the socket into p, the crypto/tls buffer. After a read that took less than
// p (the socket has most likely nothing more) it does not ask again within the same
// transport call: the poller, level-triggered, reports bytes that arrived since.
func (s *tlsConn) Read(p []byte) (int, error) {
	for {
		if !s.drained {
			n, e := s.t.read(s.fd, p)
			if countStats && n > 0 {
				s.t.opts.Counts.BytesIn += int64(n)
			}
			switch {
			case n > 0:
				if n < len(p) {
					s.drained = true
				}
				return n, nil
			case e == 0:
				return 0, io.EOF
			case e == netpoll.EINTR:
				continue
			case e != netpoll.EAGAIN:
				return 0, e
			}
			s.drained = true
		}
		if s.yield == nil {
			return 0, errTLSAgain
		}
		// In the handshake: send what it wrote, and wait for the client.
		s.flushOut()
		if !s.yield(struct{}{}) {
			return 0, net.ErrClosed
		}
		s.drained = false
	}
}

// read reads fd's bytes into p: through the loop's poller when the transport was given it.
func (t *TLS) read(fd int, p []byte) (int, netpoll.Errno) {
	if t.opts.Poll != nil {
		return t.opts.Poll.Read(fd, p)
	}
	return netpoll.Read(fd, p)
}

// Write sends p, a record or a flight of them, to the socket; what it does not take waits in
// s.out, behind anything already waiting. Records that go out through the poller's sends
// (viaRing) all wait in s.out, for sendOut to hand them to the next send.
func (s *tlsConn) Write(p []byte) (int, error) {
	n := len(p)
	if s.viaRing && s.out == nil && s.werr == 0 {
		s.out = s.t.opts.Pool.Get(len(p))
	}
	for !s.viaRing && len(s.out) == 0 && len(p) > 0 && s.werr == 0 {
		k, e := TLSWrite(s.fd, p)
		s.wrote(k)
		if k > 0 {
			p = p[k:]
			continue
		}
		if e == netpoll.EINTR {
			continue
		}
		if e != netpoll.EAGAIN {
			s.werr = e
			return n, nil // reported by the transport's write, which the loop acts on
		}
		break
	}
	if len(p) > 0 && s.werr == 0 {
		s.out = append(s.out, p...)
	}
	return n, nil
}

// flushOut writes what waits in s.out, as much as the socket takes, or hands it to the poller's
// next send (sendOut). While records wait, the connection watches for writability (TLS.Holds),
// so that the TLS layer's own output (a handshake flight, an alert) leaves without waiting for a
// response to push it.
func (s *tlsConn) flushOut() netpoll.Errno {
	if s.viaRing {
		return s.sendOut()
	}
	return s.writeOut()
}

// holds reports whether records wait for the socket: in s.out, or in a send under way.
func (s *tlsConn) holds() bool { return len(s.out) > 0 || s.flight != nil }

// sendOut takes the result of the poller's send of s.flight once it has completed, and hands
// what waits in s.out to the next send; one send is under way at a time, and the records it
// holds are the kernel's to read until it completes, so nothing is appended to them. Its
// completion is reported as writability, which brings the connection back here.
func (s *tlsConn) sendOut() netpoll.Errno {
	t := s.t
	if s.flight != nil {
		n, e, busy := t.opts.Poll.Sent(s.fd)
		if busy {
			return 0
		}
		s.wrote(n)
		switch {
		case e != 0:
			s.werr = e
		case n < len(s.flight):
			// A send cut short (the connection failing during it, whose error the next send
			// then meets): its rest goes first in the next one.
			rest := append(append(t.opts.Pool.Get(len(s.flight)-n+len(s.out)), s.flight[n:]...), s.out...)
			if s.out != nil {
				t.opts.Pool.Put(s.out)
			}
			s.out = rest
		}
		t.opts.Pool.Put(s.flight) // the kernel no longer reads it
		s.flight = nil
	}
	if s.werr != 0 {
		s.out = nil
		return s.werr
	}
	if len(s.out) == 0 {
		return 0
	}
	if e := TLSSend(t.opts.Poll, s.fd, &t.iov, s.out); e != 0 {
		return s.writeOut() // no room in the ring's queue: written as under epoll, no send being under way
	}
	s.flight, s.out = s.out, nil
	return 0
}

// writeOut writes what waits in s.out with the socket's own writes, as much as it takes.
func (s *tlsConn) writeOut() netpoll.Errno {
	for len(s.out) > 0 && s.werr == 0 {
		k, e := TLSWrite(s.fd, s.out)
		s.wrote(k)
		if k > 0 {
			s.out = s.out[k:]
			continue
		}
		if e == netpoll.EINTR {
			continue
		}
		if e != netpoll.EAGAIN {
			s.werr = e
		}
		break
	}
	if len(s.out) == 0 || s.werr != 0 {
		s.out = nil
	}
	return s.werr
}

// wrote counts k bytes written to the socket in the loop's statistics.
func (s *tlsConn) wrote(k int) {
	if countStats && k > 0 {
		s.t.opts.Counts.BytesOut += int64(k)
	}
}

func (s *tlsConn) Close() error { return nil } // the transport closes the socket

func (s *tlsConn) LocalAddr() net.Addr {
	if a, err := netpoll.BoundAddr(s.fd); err == nil {
		return a
	}
	return &net.TCPAddr{}
}

func (s *tlsConn) RemoteAddr() net.Addr { return net.TCPAddrFromAddrPort(netpoll.RemoteAddr(s.fd)) }

func (s *tlsConn) SetDeadline(time.Time) error      { return nil } // the loop's timers bound every wait
func (s *tlsConn) SetReadDeadline(time.Time) error  { return nil }
func (s *tlsConn) SetWriteDeadline(time.Time) error { return nil }

// sealedSize is room for the records that seal n bytes of plaintext: n and, for each record
// of at most 16 KiB, its header, tag and padding.
func sealedSize(n int) int { return n + (n>>14+1)*64 }
