package engine

import (
	"crypto/tls"

	"github.com/dwellhttp/dwell/core/internal/netpoll"
)

// A Transport carries a connection's bytes between the loop and the client: every read,
// vectored write, file send, shutdown of the write side and close of a connection goes through
// its transport, and nothing else of the connection touches the socket for its bytes — socket
// options (TCP_NODELAY) and the peer's address are the TCP socket's whatever carries the bytes.
// Plain is the socket itself; a layer that turns bytes into others (TLS's records) is another
// transport, under HTTP and whatever follows it alike. A transport knows a connection by its
// descriptor, and reaches what the connection is above it through its Endpoint.
//
// The calls keep the socket's conventions: a read or write returns the bytes it took and an
// errno, EAGAIN when nothing can be done before the socket is ready (the loop then waits for
// readiness, and calls again), 0 bytes and no errno for a read at the end of the client's
// input.
type Transport interface {
	Read(fd int, ep Endpoint, p []byte) (int, netpoll.Errno)
	// Writev writes the buffers of iov in order; more says more is to follow at once (a file
	// segment), so that the head and the file share segments.
	Writev(fd int, iov *netpoll.IOVecs, more bool) (int, netpoll.Errno)
	// Sendfile sends up to n bytes of f from *off, moving *off past what it sent.
	Sendfile(fd int, f netpoll.File, off *int64, n int) (int, netpoll.Errno)
	ShutdownWrite(fd int)
	// Close releases the socket; reset makes the close abortive (an RST), for a response that
	// must not look complete.
	Close(fd int, reset bool)
	// Holds reports whether output the transport made (TLS's records) waits for the socket:
	// the connection then watches for writability, and FlushHeld sends it on, returning an
	// errno other than 0 when the connection has failed.
	Holds(fd int) bool
	FlushHeld(fd int) netpoll.Errno
	// State returns a copy of the connection's TLS state once its handshake has ended, or nil:
	// always for a transport that is not TLS.
	State(fd int, ep Endpoint) *tls.ConnectionState
	// Handshaking reports whether the connection has a handshake yet to end.
	Handshaking(fd int, ep Endpoint) bool
}

// Plain is the transport of connections whose bytes are the socket's own. It counts what it
// carries in its loop's Counts. A socket the loop's poller owns (an io_uring poller's: see
// Conn.Register) is read from what the poller received, and written by the poller's sends
// (Plain's AsyncWriter methods, which the write queue calls).
type Plain struct {
	counts *Counts
	poll   *netpoll.Poller
}

// NewPlain returns the plain transport of a loop that counts in counts and polls with poll.
func NewPlain(counts *Counts, poll *netpoll.Poller) *Plain { return &Plain{counts: counts, poll: poll} }

// Plain's calls are the socket's, counted.

func (p *Plain) Read(fd int, _ Endpoint, b []byte) (int, netpoll.Errno) {
	n, e := p.poll.Read(fd, b)
	if countStats && n > 0 {
		p.counts.BytesIn += int64(n)
	}
	return n, e
}

func (p *Plain) Writev(fd int, iov *netpoll.IOVecs, more bool) (n int, e netpoll.Errno) {
	if more {
		n, e = netpoll.WritevMore(fd, iov)
	} else {
		n, e = netpoll.Writev(fd, iov)
	}
	if countStats && n > 0 {
		p.counts.BytesOut += int64(n)
	}
	return n, e
}

func (p *Plain) Sendfile(fd int, f netpoll.File, off *int64, n int) (int, netpoll.Errno) {
	k, e := netpoll.Sendfile(fd, f, off, n)
	if countStats && k > 0 {
		p.counts.BytesOut += int64(k)
	}
	return k, e
}

func (*Plain) ShutdownWrite(fd int) { netpoll.ShutdownWrite(fd) }

func (*Plain) Close(fd int, reset bool) {
	if reset {
		netpoll.ResetOnClose(fd)
	}
	netpoll.Close(fd)
}

// Submit starts a send of iov's buffers to fd, a socket the poller owns (AsyncWriter).
func (p *Plain) Submit(fd int, iov *netpoll.IOVecs, more bool) netpoll.Errno {
	return p.poll.Send(fd, iov, more)
}

// Sent returns the result of fd's last send, counted (AsyncWriter).
func (p *Plain) Sent(fd int) (int, netpoll.Errno, bool) {
	n, e, busy := p.poll.Sent(fd)
	if countStats && n > 0 {
		p.counts.BytesOut += int64(n)
	}
	return n, e, busy
}

// A plain socket holds nothing back, and has no TLS state or handshake.

func (*Plain) Holds(int) bool                           { return false }
func (*Plain) FlushHeld(int) netpoll.Errno              { return 0 }
func (*Plain) State(int, Endpoint) *tls.ConnectionState { return nil }
func (*Plain) Handshaking(int, Endpoint) bool           { return false }

var (
	_ Transport = (*Plain)(nil)
	_ Transport = (*TLS)(nil)
)
