package main

import (
	"errors"
	"fmt"
	"runtime"
	"syscall"
	"time"
)

// The epoll loop of the ws-echo and ws-bcast modes: one thread serves every connection, reading
// each readable socket once per wake-up into a shared buffer and parsing the server's frames
// in place, so that the client spends a read (and, for the echo, a write) per message and
// nothing else. A goroutine per connection would add the Go scheduler's wake-ups and the
// runtime poller's to every message, on the core the server's peer runs on.

// pconn is one connection served by the poller.
type pconn struct {
	fd     int
	idx    int    // its index in the poller's conns, the epoll events' data
	in     []byte // the start of a frame whose rest is to come
	out    []byte // what a write left over, sent at EPOLLOUT
	closed bool   // by the server (a close frame, EOF, a reset) or after an error
	polled bool   // registered with the poller

	// A fragmented message being reassembled.
	fragOp   byte
	fragRSV1 bool
	frag     []byte

	// The modes' own.
	sentAt  int64  // echo: when the message in flight was sent (Unix ns)
	frames  int    // data messages received
	next    uint64 // broadcast: the tick expected next
	gaps    int    // broadcast: ticks that never came
	stalled bool   // broadcast: a client that does not read
}

// onMessage is called with each whole data message; payload is lent for the call.
type onMessage func(c *pconn, op byte, rsv1 bool, payload []byte, now int64) error

// poller is the loop.
type poller struct {
	epfd   int
	conns  []*pconn
	buf    []byte
	events []syscall.EpollEvent
	msg    onMessage
	// serverClosed counts connections the server closed, dropped every connection no longer
	// served (closed by the server, or failed), reads the reads that returned bytes.
	serverClosed, dropped, reads int
	firstErr                     error
}

func newPoller(msg onMessage) (*poller, error) {
	fd, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	if err != nil {
		return nil, err
	}
	return &poller{epfd: fd, buf: make([]byte, 256<<10), events: make([]syscall.EpollEvent, 512), msg: msg}, nil
}

// add makes c one of the poller's connections, registered for reading when poll is set (a
// stalled broadcast client is added unpolled, and polled once the broadcast is over).
func (p *poller) add(c *pconn, poll bool) error {
	c.idx = len(p.conns)
	p.conns = append(p.conns, c)
	if poll {
		return p.poll(c)
	}
	return nil
}

// poll registers c for reading.
func (p *poller) poll(c *pconn) error {
	if c.polled || c.closed {
		return nil
	}
	c.polled = true
	return p.ctl(syscall.EPOLL_CTL_ADD, c, syscall.EPOLLIN)
}

func (p *poller) ctl(op int, c *pconn, events uint32) error {
	ev := syscall.EpollEvent{Events: events, Fd: int32(c.idx)}
	return syscall.EpollCtl(p.epfd, op, c.fd, &ev)
}

// close closes every connection and the poller.
func (p *poller) close() {
	for _, c := range p.conns {
		syscall.Close(c.fd)
	}
	syscall.Close(p.epfd)
}

// run serves events until done reports true (it is asked after every wake-up with the time)
// or until deadline. The caller's goroutine is locked to its thread meanwhile.
func (p *poller) run(deadline time.Time, done func(now int64) bool) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	for {
		now := time.Now()
		if done(now.UnixNano()) || !now.Before(deadline) {
			return nil
		}
		wait := min(time.Until(deadline), 50*time.Millisecond)
		n, err := syscall.EpollWait(p.epfd, p.events, int(wait/time.Millisecond)+1)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			return err
		}
		for _, ev := range p.events[:n] {
			c := p.conns[ev.Fd]
			if ev.Events&syscall.EPOLLOUT != 0 {
				p.flush(c)
			}
			if ev.Events&(syscall.EPOLLIN|syscall.EPOLLHUP|syscall.EPOLLERR) != 0 {
				p.read(c)
			}
		}
	}
}

// read reads what c has, once, and handles every whole frame of it.
func (p *poller) read(c *pconn) {
	if c.closed {
		return
	}
	n, err := syscall.Read(c.fd, p.buf)
	if errors.Is(err, syscall.EAGAIN) || errors.Is(err, syscall.EINTR) {
		return
	}
	if n <= 0 {
		p.drop(c, true, nil)
		return
	}
	p.reads++
	now := time.Now().UnixNano()
	data := p.buf[:n]
	if len(c.in) > 0 {
		c.in = append(c.in, data...)
		data = c.in
	}
	for len(data) > 0 && !c.closed {
		f, h, err := parseFrame(data)
		if err != nil {
			p.drop(c, false, err)
			return
		}
		if h == 0 || len(data) < h+f.length {
			break
		}
		payload := data[h : h+f.length]
		data = data[h+f.length:]
		if err := p.frame(c, f, payload, now); err != nil {
			p.drop(c, false, err)
			return
		}
	}
	// What is left is the start of a frame; copy handles the overlap when data is c.in's.
	c.in = append(c.in[:0], data...)
}

// frame handles one frame: control frames here, data messages (reassembled when fragmented)
// to the mode.
func (p *poller) frame(c *pconn, f serverFrame, payload []byte, now int64) error {
	switch f.op {
	case opPing:
		p.send(c, clientFrame(opPong, false, payload))
		return nil
	case opPong:
		return nil
	case opClose:
		p.drop(c, true, nil)
		return nil
	case opText, opBinary:
		if c.fragOp != 0 {
			return errors.New("ws: a new message inside a fragmented one")
		}
		if f.fin {
			c.frames++
			return p.msg(c, f.op, f.rsv1, payload, now)
		}
		c.fragOp, c.fragRSV1, c.frag = f.op, f.rsv1, append(c.frag[:0], payload...)
		return nil
	case 0: // continuation
		if c.fragOp == 0 {
			return errors.New("ws: a continuation without a message")
		}
		c.frag = append(c.frag, payload...)
		if !f.fin {
			return nil
		}
		op := c.fragOp
		c.fragOp = 0
		c.frames++
		return p.msg(c, op, c.fragRSV1, c.frag, now)
	}
	return fmt.Errorf("ws: opcode %d", f.op)
}

// send writes b to c, keeping what the socket does not take for EPOLLOUT.
func (p *poller) send(c *pconn, b []byte) {
	if c.closed {
		return
	}
	if len(c.out) > 0 {
		c.out = append(c.out, b...)
		return
	}
	n, err := syscall.Write(c.fd, b)
	if err != nil && !errors.Is(err, syscall.EAGAIN) {
		p.drop(c, true, nil)
		return
	}
	if n < len(b) {
		c.out = append(c.out[:0], b[max(n, 0):]...)
		p.ctl(syscall.EPOLL_CTL_MOD, c, syscall.EPOLLIN|syscall.EPOLLOUT)
	}
}

// flush writes what send left over.
func (p *poller) flush(c *pconn) {
	if c.closed || len(c.out) == 0 {
		return
	}
	n, err := syscall.Write(c.fd, c.out)
	if err != nil && !errors.Is(err, syscall.EAGAIN) {
		p.drop(c, true, nil)
		return
	}
	c.out = c.out[:copy(c.out, c.out[max(n, 0):])]
	if len(c.out) == 0 {
		p.ctl(syscall.EPOLL_CTL_MOD, c, syscall.EPOLLIN)
	}
}

// drop stops serving c: closed by the server (byServer), or failed with err.
func (p *poller) drop(c *pconn, byServer bool, err error) {
	if c.closed {
		return
	}
	c.closed = true
	p.dropped++
	if c.polled {
		syscall.EpollCtl(p.epfd, syscall.EPOLL_CTL_DEL, c.fd, nil)
	}
	if byServer {
		p.serverClosed++
	}
	if err != nil && p.firstErr == nil {
		p.firstErr = err
	}
}
