package serve

import (
	"github.com/dwellhttp/dwell/core/internal/engine"
	"github.com/dwellhttp/dwell/core/internal/netpoll"
)

// A via is what a connection keeps of the listener it came by, in a byte: the listener's index
// among the loop's (Loop.Acc.Lns; its handler Loop.handlers'), and viaTLS when it speaks TLS
// (its bytes then go through the loop's TLS transport).
type via uint8

const viaTLS via = 1 << 7

func viaListener(i int, tls bool) via {
	v := via(i)
	if tls {
		v |= viaTLS
	}
	return v
}

// listener returns the index of the listener among its loop's.
func (v via) listener() int { return int(v &^ viaTLS) }

// secure reports whether the connection speaks TLS.
func (v via) secure() bool { return v&viaTLS != 0 }

// Transport returns the transport that carries c's bytes (engine.Loop.TransportOf): its loop's
// TLS when c came by a listener that speaks TLS, else the socket's own.
func (c *Socket) Transport() engine.Transport { return c.Loop.TransportOf(&c.Conn) }

// Sender returns what carries c's queued output to the client, for the write queue: c's
// transport, called with c.
func (c *Socket) Sender() engine.Sender { return (*connSender)(c) }

// A connSender is a Socket as its write queue's engine.Sender: a conversion, never an allocation.
type connSender Socket

func (s *connSender) Writev(iov *netpoll.IOVecs, more bool) (int, netpoll.Errno) {
	c := (*Socket)(s)
	return c.Transport().Writev(int(c.FD), iov, more)
}

// Async returns the loop's plain transport when the poller sends c's bytes (an io_uring
// poller's sends: engine.Conn.Async).
func (s *connSender) Async() (engine.AsyncWriter, int) {
	c := (*Socket)(s)
	return c.Conn.Async(&c.Loop.Loop), int(c.FD)
}

func (s *connSender) Sendfile(f netpoll.File, off *int64, n int) (int, netpoll.Errno) {
	c := (*Socket)(s)
	return c.Transport().Sendfile(int(c.FD), f, off, n)
}

// A Socket is the engine.Endpoint of its TLS: the transport reads it when its TLS layer holds
// input the poller cannot announce, or its deferred handshake may go on.

func (c *Socket) Closed() bool { return c.State == StClosed }
func (c *Socket) Readable()    { c.onReadable(false) }

// handshakeDeferred reports whether c's handshake waits for a later turn: its readability is
// not watched meanwhile, so that the poller does not report it turn after turn.
func (c *Socket) handshakeDeferred() bool { return c.Secure() && c.Loop.TLS.Deferred(int(c.FD)) }
