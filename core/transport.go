package core

import (
	"crypto/tls"

	"github.com/dwellhttp/dwell/core/internal/engine"
	"github.com/dwellhttp/dwell/core/internal/netpoll"
)

// A transport carries a connection's bytes between the loop and the client: every read,
// vectored write, file send, shutdown of the write side and close of a connection goes through
// its transport (conn.tr: its listener's), and nothing else of the connection touches the
// socket for its bytes — socket options (TCP_NODELAY) and the peer's address are the TCP
// socket's whatever carries the bytes. plain is the socket itself; a layer that turns bytes
// into others (TLS's records) is another transport, under HTTP and whatever follows it alike.
//
// The calls keep the socket's conventions: a read or write returns the bytes it took and an
// errno, EAGAIN when nothing can be done before the socket is ready (the loop then waits for
// readiness, and calls again), 0 bytes and no errno for a read at the end of the client's
// input.
type transport interface {
	read(c *conn, p []byte) (int, netpoll.Errno)
	// writev writes the buffers of iov in order; more says more is to follow at once (a file
	// segment), so that the head and the file share segments.
	writev(c *conn, iov *netpoll.IOVecs, more bool) (int, netpoll.Errno)
	// sendfile sends up to n bytes of f from *off, moving *off past what it sent.
	sendfile(c *conn, f netpoll.File, off *int64, n int) (int, netpoll.Errno)
	shutdownWrite(c *conn)
	// close releases the socket; reset makes the close abortive (an RST), for a response that
	// must not look complete.
	close(c *conn, reset bool)
	// holds reports whether output the transport made of c's (TLS's records) waits for the
	// socket: the connection then watches for writability, and flushHeld sends it on, returning
	// an errno other than 0 when the connection has failed.
	holds(c *conn) bool
	flushHeld(c *conn) netpoll.Errno
	// tlsState returns a copy of c's TLS state once its handshake has ended, or nil: always for
	// a transport that is not TLS.
	tlsState(c *conn) *tls.ConnectionState
	// handshaking reports whether c has a handshake yet to end (Server.Stats).
	handshaking(c *conn) bool
}

// tr returns the transport that carries c's bytes: TLS's when c came by a listener that speaks
// TLS, else the socket's own.
func (c *conn) tr() transport {
	if c.secure() {
		return (*tlsT)(c.l.tlsT)
	}
	return plain{}
}

// sender returns what carries c's queued output to the client, for the write queue: c's
// transport, called with c.
func (c *conn) sender() engine.Sender { return (*connSender)(c) }

// A connSender is a conn as its write queue's engine.Sender: a conversion, never an allocation.
type connSender conn

func (s *connSender) Writev(iov *netpoll.IOVecs, more bool) (int, netpoll.Errno) {
	c := (*conn)(s)
	return c.tr().writev(c, iov, more)
}

func (s *connSender) Sendfile(f netpoll.File, off *int64, n int) (int, netpoll.Errno) {
	c := (*conn)(s)
	return c.tr().sendfile(c, f, off, n)
}

// plain is the transport of a connection whose bytes are the socket's own.
type plain struct{}

// The socket calls count what they carried in the loop's statistics (stats.go).

func (plain) read(c *conn, p []byte) (int, netpoll.Errno) {
	n, e := netpoll.Read(int(c.fd), p)
	if countStats && n > 0 {
		c.l.ctr.BytesIn += int64(n)
	}
	return n, e
}

func (plain) writev(c *conn, iov *netpoll.IOVecs, more bool) (n int, e netpoll.Errno) {
	if more {
		n, e = netpoll.WritevMore(int(c.fd), iov)
	} else {
		n, e = netpoll.Writev(int(c.fd), iov)
	}
	if countStats && n > 0 {
		c.l.ctr.BytesOut += int64(n)
	}
	return n, e
}

func (plain) sendfile(c *conn, f netpoll.File, off *int64, n int) (int, netpoll.Errno) {
	k, e := netpoll.Sendfile(int(c.fd), f, off, n)
	if countStats && k > 0 {
		c.l.ctr.BytesOut += int64(k)
	}
	return k, e
}

func (plain) shutdownWrite(c *conn) { netpoll.ShutdownWrite(int(c.fd)) }

func (plain) close(c *conn, reset bool) {
	if reset {
		netpoll.ResetOnClose(int(c.fd))
	}
	netpoll.Close(int(c.fd))
}

// A plain socket holds nothing back, and has no TLS state or handshake.

func (plain) holds(*conn) bool                    { return false }
func (plain) flushHeld(*conn) netpoll.Errno       { return 0 }
func (plain) tlsState(*conn) *tls.ConnectionState { return nil }
func (plain) handshaking(*conn) bool              { return false }

// tlsT is the transport of a connection that speaks TLS: its loop's engine.TLS, which knows the
// connection by its descriptor, and the conn above it as its engine.Endpoint.
type tlsT engine.TLS

func (t *tlsT) e() *engine.TLS { return (*engine.TLS)(t) }

func (t *tlsT) read(c *conn, p []byte) (int, netpoll.Errno) { return t.e().Read(int(c.fd), c, p) }

func (t *tlsT) writev(c *conn, iov *netpoll.IOVecs, _ bool) (int, netpoll.Errno) {
	return t.e().Writev(int(c.fd), iov)
}

func (t *tlsT) sendfile(c *conn, f netpoll.File, off *int64, n int) (int, netpoll.Errno) {
	return t.e().Sendfile(int(c.fd), f, off, n)
}

func (t *tlsT) shutdownWrite(c *conn)                 { t.e().ShutdownWrite(int(c.fd)) }
func (t *tlsT) close(c *conn, reset bool)             { t.e().Close(int(c.fd), reset) }
func (t *tlsT) holds(c *conn) bool                    { return t.e().Holds(int(c.fd)) }
func (t *tlsT) flushHeld(c *conn) netpoll.Errno       { return t.e().FlushHeld(int(c.fd)) }
func (t *tlsT) tlsState(c *conn) *tls.ConnectionState { return t.e().State(int(c.fd), c) }
func (t *tlsT) handshaking(c *conn) bool              { return t.e().Handshaking(int(c.fd), c) }

// A conn is the engine.Endpoint of its TLS: the transport reads it when its TLS layer holds
// input the poller cannot announce, or its deferred handshake may go on.

func (c *conn) Closed() bool      { return c.state == stClosed }
func (c *conn) WatchesRead() bool { return c.events&netpoll.WatchRead != 0 }
func (c *conn) Readable()         { c.onReadable(false) }

// handshakeDeferred reports whether c's handshake waits for a later turn: its readability is
// not watched meanwhile, so that the poller does not report it turn after turn.
func (c *conn) handshakeDeferred() bool { return c.secure() && c.l.tlsT.Deferred(int(c.fd)) }
