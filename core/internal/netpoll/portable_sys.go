//go:build !linux || dwell_portable

package netpoll

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"syscall"
)

// An Errno is an error number of the portable implementation; 0 means success. The numbers
// stand for what the system calls of the epoll implementation would have answered.
type Errno uint8

// The error numbers the loop acts on, and a few more the portable sockets report.
const (
	EAGAIN Errno = iota + 1
	EINTR
	ECONNABORTED
	EMFILE
	ENFILE
	ENOBUFS
	ENOMEM
	EIO
	EBADF
	ECONNRESET
	EPIPE
)

var errnoText = [...]string{
	EAGAIN: "resource temporarily unavailable", EINTR: "interrupted", ECONNABORTED: "connection aborted",
	EMFILE: "too many open files", ENFILE: "too many open files in system", ENOBUFS: "no buffer space",
	ENOMEM: "out of memory", EIO: "input/output error", EBADF: "bad file descriptor",
	ECONNRESET: "connection reset by peer", EPIPE: "broken pipe",
}

func (e Errno) Error() string {
	if int(e) < len(errnoText) && errnoText[e] != "" {
		return errnoText[e]
	}
	return fmt.Sprintf("errno %d", e)
}

// conn returns the connection of descriptor fd, or nil.
func connOf(fd int) *sock {
	if s := lookup(fd); s != nil && s.kind == kindConn {
		return s
	}
	return nil
}

// Read takes input of a socket into p; 0 bytes and no error means the peer's end of input.
func Read(fd int, p []byte) (int, Errno) {
	s := connOf(fd)
	if s == nil {
		return 0, EBADF
	}
	if len(p) == 0 {
		return 0, 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case len(s.in) > 0:
		n := copy(p, s.in)
		s.in = s.in[n:]
		if len(s.in) == 0 {
			s.cond.Broadcast() // the reader may read again
		}
		return n, 0
	case s.inErr == io.EOF:
		return 0, 0
	case s.inErr != nil:
		return 0, ECONNRESET
	}
	return 0, EAGAIN
}

// Write queues p for a socket's writer, as much as fits.
func Write(fd int, p []byte) (int, Errno) {
	s := connOf(fd)
	if s == nil {
		return 0, EBADF
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.queue(p)
}

// queue appends what of p fits to the output. s.mu is held.
func (s *sock) queue(p []byte) (int, Errno) {
	if s.outErr != nil || s.closing || s.shutWr {
		return 0, EPIPE
	}
	if len(p) == 0 {
		return 0, 0
	}
	room := outCap - len(s.out)
	if room <= 0 {
		return 0, EAGAIN
	}
	n := min(len(p), room)
	s.out = append(s.out, p[:n]...)
	s.cond.Broadcast()
	return n, 0
}

// IOVecs gathers buffers for one vectored write. A loop keeps one and reuses it.
type IOVecs struct{ bufs [][]byte }

// NewIOVecs returns an IOVecs with room for n buffers.
func NewIOVecs(n int) *IOVecs { return &IOVecs{bufs: make([][]byte, 0, n)} }

// Append adds b to the write.
func (v *IOVecs) Append(b []byte) { v.bufs = append(v.bufs, b) }

// Len returns the number of buffers gathered.
func (v *IOVecs) Len() int { return len(v.bufs) }

// At returns the i'th buffer gathered.
func (v *IOVecs) At(i int) []byte { return v.bufs[i] }

// Reset empties v, dropping its references to the buffers.
func (v *IOVecs) Reset() {
	clear(v.bufs)
	v.bufs = v.bufs[:0]
}

// Writev queues the gathered buffers, in order, as much as fits.
func Writev(fd int, v *IOVecs) (int, Errno) {
	s := connOf(fd)
	if s == nil {
		return 0, EBADF
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	total := 0
	for _, b := range v.bufs {
		n, e := s.queue(b)
		total += n
		if e != 0 && total == 0 {
			return 0, e
		}
		if n < len(b) || e != 0 {
			break
		}
	}
	return total, 0
}

// WritevMore is Writev: the portable writer gathers its output anyway.
func WritevMore(fd int, v *IOVecs) (int, Errno) { return Writev(fd, v) }

// A File is a file opened for sending (FileOf).
type File struct{ f *os.File }

// FileOf returns the File to send f's bytes with. f must stay open until the sends are done.
func FileOf(f *os.File) (File, error) { return File{f}, nil }

// Sendfile queues up to n bytes of f from *off for a socket, as much as fits, advancing *off.
func Sendfile(sock int, f File, off *int64, n int) (int, Errno) {
	s := connOf(sock)
	if s == nil {
		return 0, EBADF
	}
	s.mu.Lock()
	room := outCap - len(s.out)
	s.mu.Unlock()
	if room <= 0 {
		return 0, EAGAIN
	}
	buf := make([]byte, min(n, room, 64<<10))
	k, e := Pread(f, buf, *off)
	if k == 0 {
		return 0, e
	}
	w, e := Write(sock, buf[:k])
	*off += int64(w)
	return w, e
}

// Pread reads f at off into p.
func Pread(f File, p []byte, off int64) (int, Errno) {
	n, err := f.f.ReadAt(p, off)
	if err != nil && err != io.EOF && n == 0 {
		return 0, EIO
	}
	return n, 0
}

// Close closes a descriptor. A connection's writer first sends what is left, as a kernel
// does after close(2), for lingerTimeout at most. Closing a listener closes its shares.
func Close(fd int) {
	s := lookup(fd)
	if s == nil {
		return
	}
	unregister(fd)
	s.mu.Lock()
	p := s.p
	if s.kind == kindConn && !s.closing && !s.outDone {
		draining.Add(1) // the writer has output to finish: Drain waits for it
	}
	s.closing = true
	s.cond.Broadcast()
	ln, own := s.ln, s.ownLn
	accepted := s.accepted
	s.accepted = nil
	shares := s.shares
	s.mu.Unlock()
	for _, t := range shares {
		Close(t.fd)
	}
	if p != nil {
		p.Del(fd)
	}
	for _, c := range accepted {
		c.Close()
	}
	if ln != nil && own {
		ln.Close()
	}
}

// CloseListener closes a listening socket, at once: nothing else holds it here.
func CloseListener(fd int) { Close(fd) }

// ShutdownWrite ends the socket's output once what is queued is written.
func ShutdownWrite(fd int) {
	if s := connOf(fd); s != nil {
		s.mu.Lock()
		s.shutWr = true
		s.cond.Broadcast()
		s.mu.Unlock()
	}
}

// ResetOnClose makes the next Close reset the connection, dropping what is queued.
func ResetOnClose(fd int) {
	if s := connOf(fd); s != nil {
		s.mu.Lock()
		s.reset = true
		s.mu.Unlock()
	}
}

// Accept takes a connection accepted by a listener's goroutine, or says EAGAIN.
func Accept(lfd int) (int, Errno) {
	s := lookup(lfd)
	if s == nil || s.kind != kindListener {
		return -1, EBADF
	}
	s.mu.Lock()
	if len(s.accepted) == 0 {
		err := s.lnErr
		s.mu.Unlock()
		if err != nil {
			return -1, EBADF
		}
		return -1, EAGAIN
	}
	c := s.accepted[0]
	s.accepted = s.accepted[1:]
	s.mu.Unlock()
	base := s
	if s.base != nil {
		base = s.base
	}
	base.mu.Lock()
	base.cond.Broadcast() // room for the accepting goroutine
	base.mu.Unlock()
	return newConn(c), 0
}

// Share returns n descriptors for the listener fd, one for each of n loops that accept from it:
// the listener's connections are dealt to them in turn, so that every loop gets its share, as
// the kernel spreads them over SO_REUSEPORT sockets. Close each, and the listener after them.
func Share(fd, n int) []int {
	s := lookup(fd)
	if s == nil || s.kind != kindListener || n <= 1 {
		return repeat(fd, n)
	}
	fds := make([]int, n)
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range fds {
		t := newSock(kindListener)
		t.base, t.ln = s, s.ln
		fds[i] = register(t)
		s.shares = append(s.shares, t)
	}
	// Connections that came before the shares existed are dealt to them too.
	for i, c := range s.accepted {
		s.shares[i%n].accepted = append(s.shares[i%n].accepted, c)
	}
	s.accepted = nil
	s.cond.Broadcast()
	return fds
}

// SetNoDelay does nothing: the net package turns Nagle's algorithm off by default.
func SetNoDelay(fd int) {}

// DeferAccept does nothing: the net package's listeners hand connections over at once.
func DeferAccept(fd int, secs int) {}

// DefersAccept reports false: see DeferAccept.
func DefersAccept(fd int) bool { return false }

// AcceptInheritsNoDelay: every connection of the net package has TCP_NODELAY.
const AcceptInheritsNoDelay = true

// RemoteAddr returns the peer's address.
func RemoteAddr(fd int) netip.AddrPort {
	if s := connOf(fd); s != nil {
		if a, ok := s.conn.RemoteAddr().(*net.TCPAddr); ok {
			return a.AddrPort()
		}
	}
	return netip.AddrPort{}
}

func repeat(fd, n int) []int {
	fds := make([]int, max(n, 1))
	for i := range fds {
		fds[i] = fd
	}
	return fds
}

// ReusePort reports whether several loops can listen on one address with a socket each: not
// here, where the loops share one listener.
const ReusePort = false

// Listen opens a listener on addr; reusePort must be false (see ReusePort).
func Listen(addr *net.TCPAddr, reusePort bool) (int, error) {
	if reusePort {
		return -1, errors.New("dwell: SO_REUSEPORT listeners are not available on this system")
	}
	ln, err := net.ListenTCP("tcp", addr)
	if err != nil {
		return -1, err
	}
	return newListener(ln, true), nil
}

// ListenerFD makes a descriptor of ln so that the loops can poll it; close it with Close when
// done. The listener itself stays the caller's.
func ListenerFD(ln net.Listener) (int, error) {
	if _, ok := ln.Addr().(*net.TCPAddr); !ok {
		return -1, fmt.Errorf("dwell: Serve needs a TCP listener, not %T", ln)
	}
	return newListener(ln, false), nil
}

// ConnFD makes a descriptor of c, a connection accepted elsewhere, so that a loop can serve it;
// from then on c is the descriptor's, closed with it. c must be a socket (a syscall.Conn), as
// on Linux, although this implementation only reads and writes it.
func ConnFD(c net.Conn) (int, error) {
	if _, ok := c.(syscall.Conn); !ok {
		c.Close()
		return -1, fmt.Errorf("dwell: ServeConn needs a connection with a file descriptor, not %T", c)
	}
	return newConn(c), nil
}

func newListener(ln net.Listener, own bool) int {
	s := newSock(kindListener)
	s.ln, s.ownLn = ln, own
	fd := register(s)
	go s.accept()
	return fd
}

// BoundAddr returns the address a listener is bound to.
func BoundAddr(fd int) (*net.TCPAddr, error) {
	if s := lookup(fd); s != nil && s.kind == kindListener {
		if a, ok := s.ln.Addr().(*net.TCPAddr); ok {
			return a, nil
		}
	}
	return nil, errors.New("dwell: listener has a non-TCP address")
}

// Drain waits until the connections closed so far have written what was left to them, as a
// kernel does on its own after close(2): a program must not exit before, or the output is lost.
// It waits lingerTimeout at most for each.
func Drain() { draining.Wait() }
