package engine

import (
	"github.com/dwellhttp/dwell/core/internal/netpoll"
	"github.com/dwellhttp/dwell/internal/alias"
)

// A Conn is what the engine keeps of a connection: its descriptor; what the poller watches it
// for; which of the loop's transports carries its bytes; and its unparsed input — in the loop's
// shared read buffer during a turn, in a spill buffer of its own between turns, so that an idle
// connection holds no buffer. The server's connection holds one right after what it shares with
// an HTTP/2 stream, in 32 bytes (In, the descriptor, then a byte each of interest and flags).
type Conn struct {
	In     []byte // unparsed input: in the loop buffer during a turn, in a spill buffer between turns
	FD     int32
	Events netpoll.Interest // what the poller watches the descriptor for (Watch)
	flags  connFlags
}

type connFlags uint8

const (
	connPolled  connFlags = 1 << iota // registered with the poller: until then Watch only notes Events
	connTLS                           // its bytes go through the loop's TLS transport
	connSpilled                       // In lives in a spill buffer of its own (Loop.Spills)
)

// NewConn returns the Conn of descriptor fd, a connection just accepted that the loop will read
// (whose bytes go through TLS if tls is set), not yet registered with the poller.
func NewConn(fd int, tls bool) Conn {
	c := Conn{FD: int32(fd), Events: netpoll.WatchRead | netpoll.WatchHangup}
	if tls {
		c.flags = connTLS
	}
	return c
}

// Secure reports whether c's bytes go through TLS.
func (c *Conn) Secure() bool { return c.flags&connTLS != 0 }

// WatchesRead reports whether the poller watches c for input (Endpoint).
func (c *Conn) WatchesRead() bool { return c.Events&netpoll.WatchRead != 0 }

// TransportOf returns the transport that carries c's bytes: l's TLS for a connection that speaks
// it, else the socket's own.
func (l *Loop) TransportOf(c *Conn) Transport {
	if c.Secure() {
		return l.TLS
	}
	return l.Plain
}

// Register has l's poller watch c for c.Events, its events tagged with tag. Until then Watch
// only notes what c waits for: a connection served at once on accept (a request that came with
// it) may be closed before it is ever polled.
func (c *Conn) Register(l *Loop, tag uint32) error {
	if err := l.Poll.Add(int(c.FD), tag, c.Events); err != nil {
		return err
	}
	c.flags |= connPolled
	return nil
}

// Watch has the poller watch c for ev (its events tagged with tag), unless it already does: a
// connection's steady keep-alive path asks for what it already has, and pays no system call.
func (c *Conn) Watch(l *Loop, tag uint32, ev netpoll.Interest) error {
	if ev == c.Events {
		return nil
	}
	c.Events = ev
	if c.flags&connPolled == 0 {
		return nil
	}
	return l.Poll.Mod(int(c.FD), tag, ev)
}

// Release closes c's descriptor through its transport (reset makes the close abortive, for a
// response that must not look complete), once the poller has stopped watching it, and drops its
// input, giving a spill buffer back to l's pool.
func (c *Conn) Release(l *Loop, reset bool) {
	if c.flags&connPolled != 0 {
		l.Poll.Closing(int(c.FD))
	}
	l.TransportOf(c).Close(int(c.FD), reset)
	c.In = nil
	c.DropSpill(l)
}

// KeepInput ends c's turn on l for its input: what is left unparsed in l's read buffer, which
// the next connection's turn will overwrite, moves into a spill buffer sized for it; with
// nothing left, a spill buffer goes back to the pool.
func (c *Conn) KeepInput(l *Loop) {
	switch {
	case len(c.In) == 0:
		c.DropSpill(l)
		c.In = nil
	case alias.Within(c.In, l.Buf):
		c.DropSpill(l)
		b := append(l.Pool.Get(len(c.In)), c.In...)
		l.Spills.hold(c.FD, b)
		c.flags |= connSpilled
		c.In = b
	}
}

// DropSpill gives c's spill buffer back to l's pool, if it holds one; In, if it was there, is
// no longer c's to read.
func (c *Conn) DropSpill(l *Loop) {
	if c.flags&connSpilled != 0 {
		l.Spills.release(c.FD, &l.Pool)
		c.flags &^= connSpilled
	}
}

// Spills are a loop's spill buffers, by descriptor: what a connection keeps of its unparsed
// input between turns, once the loop's shared read buffer is the next connection's, in a buffer
// from the pool sized for it. The loop holds them, so that a connection keeps a bit (connSpilled)
// where a slice would take 24 bytes of every connection, idle ones included; few connections
// hold one at once (a request or frame cut by the end of a read).
type Spills struct {
	bufs map[int32][]byte
}

// hold keeps b, a buffer of the pool's, as descriptor fd's.
func (s *Spills) hold(fd int32, b []byte) {
	if s.bufs == nil {
		s.bufs = make(map[int32][]byte)
	}
	s.bufs[fd] = b
}

// release gives descriptor fd's buffer back to pool.
func (s *Spills) release(fd int32, pool *OutPool) {
	pool.Put(s.bufs[fd])
	delete(s.bufs, fd)
}
