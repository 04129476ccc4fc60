package engine

import (
	"github.com/dwellhttp/dwell/core/internal/netpoll"
	"github.com/dwellhttp/dwell/internal/alias"
)

// A Conn is what the engine keeps of a connection: its descriptor; what the poller watches it
// for; which of the loop's transports carries its bytes; and its unparsed input — in the loop's
// shared read buffer during a turn, in a spill buffer of its own between turns, so that an idle
// connection holds no buffer. The server's connection holds one right after what it shares with
// an HTTP/2 stream, in 32 bytes: In, the descriptor, and a word that packs the rest.
type Conn struct {
	In   []byte // unparsed input: in the loop buffer during a turn, in a spill buffer between turns
	FD   int32
	word connWord
}

// A connWord packs, in 4 bytes, the handle of a Conn's spill buffer (the high 24 bits: 1 + its
// index in the loop's Spills; 0 for none) and its state (the low 8 bits): what the poller
// watches it for (netpoll.Interest's three bits), whether it is registered, whether it speaks
// TLS. 24 bits hold 16,777,215 spill buffers, one at most for each of a loop's connections:
// sixteen times the descriptors Linux lets a process open by default (fs.nr_open); Hold panics
// past them rather than mix one connection's input with another's.
type connWord uint32

const (
	wordEvents connWord = 0x07 // netpoll.Interest's bits (TestConnLayout checks that they fit)
	wordPolled connWord = 1 << 3
	wordTLS    connWord = 1 << 4
	wordOwned  connWord = 1 << 5 // the poller reads and writes it (netpoll.Poller.Own)
	spillShift          = 8
	maxSpills           = 1<<(32-spillShift) - 1
)

// NewConn returns the Conn of descriptor fd, a connection just accepted that the loop will read
// (whose bytes go through TLS if tls is set), not yet registered with the poller.
func NewConn(fd int, tls bool) Conn {
	c := Conn{FD: int32(fd), word: connWord(netpoll.WatchRead | netpoll.WatchHangup)}
	if tls {
		c.word |= wordTLS
	}
	return c
}

// Events returns what the poller watches c for (Watch).
func (c *Conn) Events() netpoll.Interest { return netpoll.Interest(c.word & wordEvents) }

// spill returns the handle of c's spill buffer, 0 for none.
func (c *Conn) spill() int32 { return int32(c.word >> spillShift) }

func (c *Conn) setSpill(h int32) { c.word = c.word&(1<<spillShift-1) | connWord(h)<<spillShift }

// Secure reports whether c's bytes go through TLS.
func (c *Conn) Secure() bool { return c.word&wordTLS != 0 }

// WatchesRead reports whether the poller watches c for input (Endpoint).
func (c *Conn) WatchesRead() bool { return c.Events()&netpoll.WatchRead != 0 }

// TransportOf returns the transport that carries c's bytes: l's TLS for a connection that speaks
// it, else the socket's own.
func (l *Loop) TransportOf(c *Conn) Transport {
	if c.Secure() {
		return l.TLS
	}
	return l.Plain
}

// Register has l's poller watch c for its Events, its events tagged with tag. Until then Watch
// only notes what c waits for: a connection served at once on accept (a request that came with
// it) may be closed before it is ever polled. c's reads and writes then go through the poller
// when it takes them (an io_uring poller's receives and sends): a plain connection's queued
// output as the queue's (Async), a TLS connection's as the records its transport makes of it
// (tlsconn.go, sendOut).
func (c *Conn) Register(l *Loop, tag uint32) error {
	if err := l.Poll.Add(int(c.FD), tag, c.Events()); err != nil {
		return err
	}
	c.word |= wordPolled
	if l.Poll.Own(int(c.FD)) {
		c.word |= wordOwned
	}
	return nil
}

// Owned reports whether the poller reads and writes c itself (Register).
func (c *Conn) Owned() bool { return c.word&wordOwned != 0 }

// Async returns what sends c's queued output when the poller does (Plain, as an AsyncWriter),
// else nil: the Async of c's Sender. A TLS connection's queue is written through its transport,
// which hands the poller the records, not the queue's buffers.
func (c *Conn) Async(l *Loop) AsyncWriter {
	if c.word&wordOwned != 0 && !c.Secure() {
		return l.Plain
	}
	return nil
}

// InFlight returns the bytes at the front of c's queued output that a send under way holds:
// the queue leaves their buffers to the send when c closes (WriteQueue.Release).
func (c *Conn) InFlight(l *Loop) int {
	if c.Async(l) == nil {
		return 0 // the queue's buffers go to no send (TLS's sends hold its records)
	}
	return l.Poll.Sending(int(c.FD))
}

// Watch has the poller watch c for ev (its events tagged with tag), unless it already does: a
// connection's steady keep-alive path asks for what it already has, and pays no system call.
func (c *Conn) Watch(l *Loop, tag uint32, ev netpoll.Interest) error {
	if ev == c.Events() {
		return nil
	}
	c.word = c.word&^wordEvents | connWord(ev)
	if c.word&wordPolled == 0 {
		return nil
	}
	return l.Poll.Mod(int(c.FD), tag, ev)
}

// Release closes c's descriptor through its transport (reset makes the close abortive, for a
// response that must not look complete), once the poller has stopped watching it, and drops its
// input, giving a spill buffer back to l's pool.
func (c *Conn) Release(l *Loop, reset bool) {
	if c.word&wordPolled != 0 {
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
		c.setSpill(l.Spills.Hold(b))
		c.In = b
	}
}

// DropSpill gives c's spill buffer back to l's pool, if it holds one; In, if it was there, is
// no longer c's to read.
func (c *Conn) DropSpill(l *Loop) {
	if h := c.spill(); h != 0 {
		l.Spills.Release(h, &l.Pool)
		c.setSpill(0)
	}
}

// Spills are a loop's spill buffers: what a connection keeps of its unparsed input between
// turns, once the loop's shared read buffer is the next connection's, in a buffer from the pool
// sized for it. The loop holds them, so that a connection keeps a 24-bit handle in its Conn's
// word where a slice would take 24 bytes of every connection, idle ones included.
type Spills struct {
	bufs [][]byte
	free []int32 // indexes of bufs not in use
}

// Hold keeps b, a buffer of the pool's, and returns its handle.
func (s *Spills) Hold(b []byte) int32 {
	if n := len(s.free); n > 0 {
		i := s.free[n-1]
		s.free = s.free[:n-1]
		s.bufs[i] = b
		return i + 1
	}
	if len(s.bufs) == maxSpills {
		panic("dwell: more spill buffers on one loop than a Conn's handle holds (16,777,215)")
	}
	s.bufs = append(s.bufs, b)
	return int32(len(s.bufs))
}

// Release gives the buffer of handle h back to pool.
func (s *Spills) Release(h int32, pool *OutPool) {
	i := h - 1
	pool.Put(s.bufs[i])
	s.bufs[i] = nil
	s.free = append(s.free, i)
}
