//go:build !linux || dwell_portable

package netpoll

import (
	"io"
	"net"
	"sync"
	"time"
)

// The portable implementation. A descriptor is a number from this package's table, standing
// for a socket of the net package, a listener, or a wake-up. Each connection has two
// goroutines, which Go's runtime poller parks while the network has nothing for them:
//
//   - a reader fills the socket's input buffer with one Read, then waits until the loop has
//     taken all of it (Read) before reading again — so input is read ahead by one buffer at
//     most, as a kernel's socket buffer would hold it;
//   - a writer takes what the loop wrote into the output buffer (Write, up to outCap bytes, past
//     which Write returns EAGAIN) and writes it to the network.
//
// Every change a loop could be waiting for (input arrived, room to write, the peer's end, a
// failure, a new connection, a wake-up) marks the socket's poller, and Wait reports readiness
// level-triggered, from the sockets' state, exactly as epoll does for the loop.

// Buffer sizes of a portable socket.
const (
	inSize = 16 << 10  // one read from the network
	outCap = 256 << 10 // output accepted before Write says EAGAIN
)

// lingerTimeout bounds how long a closed socket's writer keeps sending what was left.
const lingerTimeout = 5 * time.Second

// draining counts the connections closed whose writer has yet to finish, for Drain.
var draining sync.WaitGroup

type sockKind uint8

const (
	kindConn sockKind = iota
	kindListener
	kindWakeup
)

// A sock is one descriptor of the table.
type sock struct {
	mu   sync.Mutex
	cond sync.Cond // the reader and writer goroutines wait on it
	kind sockKind
	fd   int

	// Registration with a poller.
	p        *Poller
	tag      uint32
	interest Interest

	// A connection.
	conn    net.Conn
	in      []byte // input read and not yet taken
	inErr   error  // what ended the input: io.EOF, or a failure
	out     []byte // output written and not yet taken by the writer
	outErr  error  // a failure to write
	closing bool   // Close was called: write out what is left, then close
	reset   bool   // close without writing what is left, and reset the connection
	shutWr  bool   // ShutdownWrite was called: end the output once it is written
	outDone bool   // the writer goroutine has ended

	// A listener, or one loop's share of it (Share).
	ln       net.Listener
	ownLn    bool       // Close closes ln too (Listen made it; ListenerFD did not)
	accepted []net.Conn // connections accepted and not yet taken by Accept
	lnErr    error
	shares   []*sock // the shares connections are dealt to, in turn; none: this sock takes them
	next     int     // the share the next connection goes to
	base     *sock   // for a share, the listener it takes its connections from

	// A wake-up.
	signalled bool
}

// table is the descriptors in use, by number; free numbers are reused, lowest last freed
// first, so that a loop's tables indexed by descriptor stay small.
var table struct {
	mu    sync.Mutex
	socks []*sock
	free  []int
}

// firstFD keeps descriptors clear of 0, 1 and 2, which read as stdin, stdout and stderr.
const firstFD = 3

func register(s *sock) int {
	table.mu.Lock()
	defer table.mu.Unlock()
	if n := len(table.free); n > 0 {
		fd := table.free[n-1]
		table.free = table.free[:n-1]
		table.socks[fd] = s
		s.fd = fd
		return fd
	}
	for len(table.socks) < firstFD {
		table.socks = append(table.socks, nil)
	}
	table.socks = append(table.socks, s)
	s.fd = len(table.socks) - 1
	return s.fd
}

func lookup(fd int) *sock {
	table.mu.Lock()
	defer table.mu.Unlock()
	if fd < 0 || fd >= len(table.socks) {
		return nil
	}
	return table.socks[fd]
}

func unregister(fd int) {
	table.mu.Lock()
	defer table.mu.Unlock()
	if fd >= firstFD && fd < len(table.socks) && table.socks[fd] != nil {
		table.socks[fd] = nil
		table.free = append(table.free, fd)
	}
}

func newSock(kind sockKind) *sock {
	s := &sock{kind: kind}
	s.cond.L = &s.mu
	return s
}

// changed tells the socket's poller that its state changed. s.mu is held.
func (s *sock) changed() {
	if s.p != nil {
		s.p.kick()
	}
}

// newConn starts serving c as a descriptor.
func newConn(c net.Conn) int {
	s := newSock(kindConn)
	s.conn = c
	fd := register(s)
	go s.read()
	go s.write()
	return fd
}

// read is a connection's reader goroutine.
func (s *sock) read() {
	buf := make([]byte, inSize)
	for {
		n, err := s.conn.Read(buf)
		s.mu.Lock()
		if s.closing {
			s.mu.Unlock()
			return
		}
		s.in = buf[:n]
		if err != nil {
			s.inErr = err
		}
		s.changed()
		for len(s.in) > 0 && !s.closing {
			s.cond.Wait()
		}
		done := s.inErr != nil || s.closing
		s.mu.Unlock()
		if done {
			return
		}
	}
}

// write is a connection's writer goroutine.
func (s *sock) write() {
	defer func() {
		s.mu.Lock()
		if s.closing {
			draining.Done() // Close counted this connection
		}
		s.outDone = true
		s.mu.Unlock()
	}()
	var spare []byte
	shut := false // the output has been shut down (ShutdownWrite)
	for {
		s.mu.Lock()
		for len(s.out) == 0 && !s.closing && (!s.shutWr || shut) && s.outErr == nil {
			s.cond.Wait()
		}
		if s.outErr != nil || s.reset || len(s.out) == 0 {
			// Nothing more to write: end as asked.
			reset, closing := s.reset, s.closing || s.outErr != nil
			s.mu.Unlock()
			tc, _ := s.conn.(*net.TCPConn)
			switch {
			case reset:
				if tc != nil {
					tc.SetLinger(0)
				}
				s.conn.Close()
				return
			case closing:
				s.conn.Close()
				return
			}
			if tc != nil {
				tc.CloseWrite()
			}
			shut = true
			continue
		}
		data := s.out
		s.out = spare[:0]
		if s.closing {
			s.conn.SetWriteDeadline(time.Now().Add(lingerTimeout))
		}
		s.mu.Unlock()
		_, err := s.conn.Write(data)
		s.mu.Lock()
		spare = data
		if err != nil {
			s.outErr = err
		}
		s.changed()
		s.mu.Unlock()
	}
}

// accept is a listener's goroutine: it takes connections as they come and queues them for
// Accept — on the listener, or on its shares in turn — keeping each queue bounded, as a listen
// backlog is.
func (s *sock) accept() {
	for {
		c, err := s.ln.Accept()
		if err != nil {
			s.fail(err)
			return
		}
		if !s.deal(c) {
			c.Close()
		}
	}
}

// deal queues c on the listener, or on its next share with room, waiting while every queue is
// full; it reports false once the listener is closed.
func (s *sock) deal(c net.Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for !s.closing {
		targets := s.shares
		if len(targets) == 0 {
			targets = []*sock{s}
		}
		for range targets {
			t := targets[s.next%len(targets)]
			s.next++
			if t != s {
				t.mu.Lock()
			}
			ok := !t.closing && len(t.accepted) < acceptQueue
			if ok {
				t.accepted = append(t.accepted, c)
				t.changed()
			}
			if t != s {
				t.mu.Unlock()
			}
			if ok {
				return true
			}
		}
		s.cond.Wait() // woken when an Accept makes room, or the listener closes
	}
	return false
}

// fail records the error that ended a listener, on it and its shares.
func (s *sock) fail(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lnErr = err
	s.changed()
	for _, t := range s.shares {
		t.mu.Lock()
		t.lnErr = err
		t.changed()
		t.mu.Unlock()
	}
}

// acceptQueue bounds the connections accepted ahead of the loop.
const acceptQueue = 128

// readiness returns the events s has for the interest in, and whether it has any. s.mu is held.
func (s *sock) readiness(in Interest) (ev evFlags) {
	switch s.kind {
	case kindWakeup:
		if s.signalled {
			ev |= evReadable
		}
	case kindListener:
		if len(s.accepted) > 0 || s.lnErr != nil {
			ev |= evReadable
		}
	case kindConn:
		if in&WatchRead != 0 && (len(s.in) > 0 || s.inErr != nil) {
			ev |= evReadable
		}
		if s.inErr == io.EOF && in&WatchHangup != 0 {
			ev |= evPeerClosed
		}
		if in&WatchWrite != 0 && (len(s.out) < outCap || s.outErr != nil) {
			ev |= evWritable
		}
		if s.inErr != nil && s.inErr != io.EOF || s.outErr != nil {
			ev |= evFailed
		}
	}
	return ev
}
