// Command uring-floor is the io_uring floor of the dwell benchmarks' HTTP/1.1 CPU figures (hello
// keep-alive, one connection, pipelined): one io_uring instance, one goroutine, answering GET
// /hello with the fixed response and the least HTTP of bench/servers/gnet (internal/floorhttp).
// It does what a Go program on io_uring can do at least per request — a multishot accept, a
// multishot receive per connection into provided buffers, the turn's sends submitted with the
// one io_uring_enter that also collects the next completions, the loop parked in Go's poller
// between turns — so its cost per request is roughly the kernel's and the Go runtime's: what a
// server on io_uring spends above it is its own, as the gnet floor is for epoll.
//
// It is not an HTTP server, and no model of one: a connection's input is bounded only by the
// head limit, there are no timeouts, every request but GET /hello gets a 404, a malformed one a
// 400 and the connection's end.
package main

import (
	"log"
	"net"
	"os"
	"syscall"
	"time"
	"unsafe"

	"github.com/dwellhttp/dwell/bench/internal/floorhttp"
	"github.com/dwellhttp/dwell/bench/internal/peer"
	"golang.org/x/sys/unix"
)

const (
	bufGroup = 0
	bufCount = 1024    // receive buffers shared by the connections (a power of two)
	bufSize  = 4 << 10 // each: a hello request is 40 bytes, 16 pipelined are 650
)

// A completion's user_data: the kind in the top byte, the descriptor below.
const (
	kindAccept = iota
	kindRecv
	kindSend
)

func data(kind uint8, fd int) uint64 { return uint64(kind)<<56 | uint64(uint32(fd)) }

// conn is one connection: its unparsed input, the answers being sent, and those made meanwhile.
// Two output buffers take turns, so that a connection in steady state allocates nothing.
type conn struct {
	in       []byte
	sending  []byte // under way: the kernel reads it until the send's completion
	out      []byte
	spare    []byte
	recvDone bool // the multishot receive ended (end of input or error)
	end      bool // answer what is queued, then close
	shut     bool // shut down, for the receive to end
}

type floor struct {
	r       *ring
	bufs    *bufRing
	lfd     int
	conns   map[int]*conn
	answers *floorhttp.Answers
	toSend  []int // connections with answers and no send under way, this turn
}

func main() {
	f := peer.ParseFlags()
	ln, err := net.Listen("tcp", f.Addr)
	if err != nil {
		log.Fatal(err)
	}
	file, err := ln.(*net.TCPListener).File() // a blocking duplicate: io_uring polls it itself
	if err != nil {
		log.Fatal(err)
	}
	lfd := int(file.Fd())
	fl := &floor{lfd: lfd, conns: make(map[int]*conn), answers: floorhttp.NewAnswers("uring-floor")}
	ready := make(chan error, 1)
	go fl.run(ready)
	if err := <-ready; err != nil {
		log.Fatal(err)
	}
	peer.Ready(f.Addr)
	peer.WaitForStop()
}

// run is the loop. It waits as a goroutine of package net waits on its socket: parked in Go's
// poller until the ring's descriptor is readable (it has completions), each check submitting
// what the turn queued.
func (fl *floor) run(ready chan<- error) {
	var rc syscall.RawConn
	var err error
	if fl.r, err = newRing(4096); err == nil {
		fl.bufs, err = newBufRing(fl.r, bufGroup, bufCount, bufSize)
	}
	if err == nil {
		if err = unix.SetNonblock(fl.r.fd, true); err == nil {
			rc, err = os.NewFile(uintptr(fl.r.fd), "io_uring").SyscallConn()
		}
	}
	ready <- err
	if err != nil {
		return
	}
	check := func(uintptr) bool {
		fl.r.enter()
		return fl.r.ready()
	}
	fl.accept()
	for {
		rc.Read(check)
		fl.answers.Refresh(time.Now())
		fl.r.completions(fl.complete)
		for _, fd := range fl.toSend {
			fl.send(fd)
		}
		fl.toSend = fl.toSend[:0]
	}
}

func (fl *floor) accept() {
	s := fl.r.get()
	s.opcode, s.fd, s.ioprio = opAccept, int32(fl.lfd), acceptMultishot
	s.opFlags = unix.SOCK_CLOEXEC
	s.userData = data(kindAccept, fl.lfd)
}

func (fl *floor) recv(fd int) {
	s := fl.r.get()
	s.opcode, s.fd, s.ioprio, s.flags = opRecv, int32(fd), recvMultishot, sqeBufferSelect
	s.bufGroup = bufGroup
	s.userData = data(kindRecv, fd)
}

// send sends what fd has queued, unless a send is under way: its completion sends the rest.
func (fl *floor) send(fd int) {
	cn := fl.conns[fd]
	if cn == nil || cn.sending != nil || len(cn.out) == 0 {
		return
	}
	cn.sending, cn.out, cn.spare = cn.out, cn.spare[:0], nil
	s := fl.r.get()
	s.opcode, s.fd = opSend, int32(fd)
	s.addr = uint64(uintptr(unsafe.Pointer(&cn.sending[0])))
	s.len = uint32(len(cn.sending))
	s.opFlags = unix.MSG_WAITALL | unix.MSG_NOSIGNAL
	s.userData = data(kindSend, fd)
}

func (fl *floor) complete(c cqe) {
	fd := int(uint32(c.userData))
	switch uint8(c.userData >> 56) {
	case kindAccept:
		if c.res >= 0 {
			nfd := int(c.res)
			unix.SetsockoptInt(nfd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1)
			fl.conns[nfd] = &conn{}
			fl.recv(nfd)
		}
		if c.flags&cqeFMore == 0 {
			fl.accept()
		}
	case kindRecv:
		fl.received(fd, c)
	case kindSend:
		cn := fl.conns[fd]
		cn.spare, cn.sending = cn.sending[:0], nil
		if c.res < 0 {
			cn.end, cn.out = true, cn.out[:0]
		}
		fl.send(fd)
		fl.closeIfDone(fd, cn)
	}
}

func (fl *floor) received(fd int, c cqe) {
	cn := fl.conns[fd]
	if c.flags&cqeFMore == 0 {
		if c.res > 0 || c.res == -int32(syscall.ENOBUFS) {
			defer fl.recv(fd) // the receive stopped (its buffers ran out): another takes over
		} else {
			cn.recvDone, cn.end = true, true
		}
	}
	if c.res <= 0 || c.flags&cqeFBuffer == 0 {
		fl.closeIfDone(fd, cn)
		return
	}
	id := uint16(c.flags >> 16)
	defer fl.bufs.give(id)
	if cn.end {
		return // answered its last request: what follows is dropped
	}
	in := fl.bufs.buf(id, int(c.res))
	if len(cn.in) > 0 {
		cn.in = append(cn.in, in...)
		in = cn.in
	}
	queued := len(cn.out) > 0
	used, out, end := fl.answers.Answer(in, cn.out)
	cn.out, cn.end = out, end
	cn.in = append(cn.in[:0], in[used:]...)
	if !queued && len(cn.out) > 0 && cn.sending == nil {
		fl.toSend = append(fl.toSend, fd)
	}
	fl.closeIfDone(fd, cn)
}

// closeIfDone closes fd once it is to end, its answers have gone and its receive has ended.
func (fl *floor) closeIfDone(fd int, cn *conn) {
	if !cn.end || cn.sending != nil || len(cn.out) > 0 {
		return
	}
	if !cn.recvDone {
		if !cn.shut {
			// The receive ends with the end of input the shutdown brings.
			unix.Shutdown(fd, unix.SHUT_RDWR)
			cn.shut = true
		}
		return
	}
	delete(fl.conns, fd)
	unix.Close(fd)
}
