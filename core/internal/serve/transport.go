package serve

import (
	"github.com/dwellhttp/dwell/core/internal/engine"
	"github.com/dwellhttp/dwell/core/internal/netpoll"
)

// tr returns the transport that carries c's bytes (engine.Transport): its loop's TLS when c
// came by a listener that speaks TLS, else the socket's own.
func (c *conn) tr() engine.Transport {
	if c.secure() {
		return c.l.tlsT
	}
	return c.l.plain
}

// sender returns what carries c's queued output to the client, for the write queue: c's
// transport, called with c.
func (c *conn) sender() engine.Sender { return (*connSender)(c) }

// A connSender is a conn as its write queue's engine.Sender: a conversion, never an allocation.
type connSender conn

func (s *connSender) Writev(iov *netpoll.IOVecs, more bool) (int, netpoll.Errno) {
	c := (*conn)(s)
	return c.tr().Writev(int(c.fd), iov, more)
}

func (s *connSender) Sendfile(f netpoll.File, off *int64, n int) (int, netpoll.Errno) {
	c := (*conn)(s)
	return c.tr().Sendfile(int(c.fd), f, off, n)
}

// A conn is the engine.Endpoint of its TLS: the transport reads it when its TLS layer holds
// input the poller cannot announce, or its deferred handshake may go on.

func (c *conn) Closed() bool      { return c.state == stClosed }
func (c *conn) WatchesRead() bool { return c.events&netpoll.WatchRead != 0 }
func (c *conn) Readable()         { c.onReadable(false) }

// handshakeDeferred reports whether c's handshake waits for a later turn: its readability is
// not watched meanwhile, so that the poller does not report it turn after turn.
func (c *conn) handshakeDeferred() bool { return c.secure() && c.l.tlsT.Deferred(int(c.fd)) }
