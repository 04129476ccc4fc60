// Command ws-floor is the floor of the WebSocket benchmarks' CPU figures: one epoll loop on one
// locked OS thread over non-blocking sockets (golang.org/x/sys/unix), with the least HTTP and
// WebSocket that the load tool's modes need, on the routes of package wspeer but /echo-deflate.
// Its cost per message is roughly the cost of its syscalls and of the loopback TCP stack, which
// runs on the sender's CPU; what a server spends above it is its own.
//
// It is not a WebSocket server: no compression (/echo-deflate answers 404), no UTF-8 check of
// text, no fragmentation rules, no timeouts, GET requests without bodies only. The data path:
//
//	accept → read (one per readable socket per wake-up, into the loop's buffer) →
//	  before the upgrade: request heads → /hello, /start answered; /echo, /broadcast upgraded
//	  after it: frames → unmasked → echoed (/echo) or dropped (/broadcast); ping, close answered
//	→ everything one read produced, in one write → what the socket does not take, queued
//	  (at most wspeer.QueueBytes) and written at EPOLLOUT.
//
// The broadcast: Plan.Start's goroutine posts each payload to the loop through an eventfd, and
// the loop frames it once and writes the frame to every member with one write each.
package main

import (
	"bytes"
	"crypto/sha1"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"log"
	"net"
	"net/url"
	"os"
	"runtime"
	"strings"
	"sync"

	"github.com/dwellhttp/dwell/bench/internal/peer"
	"github.com/dwellhttp/dwell/bench/internal/wspeer"
	"golang.org/x/sys/unix"
)

const (
	maxHead  = 8 << 10 // a request head that does not end within this is refused
	maxFrame = 1 << 20 // a longer frame closes the connection (wspeer's messages are at most this)
	guid     = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
)

// Opcodes (RFC 6455 §5.2).
const (
	opBinary, opClose, opPing, opPong byte = 0x2, 0x8, 0x9, 0xa
)

type state uint8

const (
	inHTTP state = iota
	inEcho
	inBroadcast
)

// conn is one connection. An idle one holds this struct and nothing else.
type conn struct {
	fd      int // -1 once closed
	state   state
	in      []byte // the start of a request head or of a frame whose rest is to come
	out     []byte // what the socket did not take
	member  int    // index in loop.members while in the broadcast, else -1
	closing bool   // close once out is written (after a close frame or a refused request)
}

// loop holds every connection's state. Only its goroutine touches it, pending aside (under mu).
type loop struct {
	epfd, lfd, efd int
	conns          []*conn // by descriptor
	members        []*conn // the broadcast's
	buf            []byte  // every read's
	out, frame     []byte  // one read's answers; one broadcast's frames
	events         []unix.EpollEvent
	paused         bool // the listener left epoll after an accept error, until a close

	mu      sync.Mutex
	pending [][]byte // payloads posted by the broadcast's goroutine, not yet framed
}

func main() {
	addr := wspeer.ParseFlags()
	l, err := listen(addr)
	if err != nil {
		log.Fatal(err)
	}
	go l.run()
	peer.Ready(addr)
	// Returning ends the process and with it every connection, as servers/gnet does.
	peer.WaitForStop()
}

// listen opens the listener, the eventfd and the epoll instance.
func listen(addr string) (*loop, error) {
	ta, err := net.ResolveTCPAddr("tcp4", addr)
	if err != nil {
		return nil, err
	}
	l := &loop{buf: make([]byte, 64<<10), events: make([]unix.EpollEvent, 512)}
	if l.lfd, err = unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0); err != nil {
		return nil, os.NewSyscallError("socket", err)
	}
	sa := &unix.SockaddrInet4{Port: ta.Port}
	copy(sa.Addr[:], ta.IP.To4())
	unix.SetsockoptInt(l.lfd, unix.SOL_SOCKET, unix.SO_REUSEADDR, 1)
	if err := unix.Bind(l.lfd, sa); err != nil {
		return nil, os.NewSyscallError("bind", err)
	}
	// The broadcast figures connect 5,000 clients, 32 at a time.
	if err := unix.Listen(l.lfd, unix.SOMAXCONN); err != nil {
		return nil, os.NewSyscallError("listen", err)
	}
	if l.efd, err = unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC); err != nil {
		return nil, os.NewSyscallError("eventfd", err)
	}
	if l.epfd, err = unix.EpollCreate1(unix.EPOLL_CLOEXEC); err != nil {
		return nil, os.NewSyscallError("epoll_create1", err)
	}
	if err := errors.Join(l.ctl(unix.EPOLL_CTL_ADD, l.lfd, unix.EPOLLIN), l.ctl(unix.EPOLL_CTL_ADD, l.efd, unix.EPOLLIN)); err != nil {
		return nil, err
	}
	return l, nil
}

func (l *loop) ctl(op, fd int, events uint32) error {
	ev := unix.EpollEvent{Events: events, Fd: int32(fd)}
	return os.NewSyscallError("epoll_ctl", unix.EpollCtl(l.epfd, op, fd, &ev))
}

// run serves events for the process's life. Level-triggered, one read per readable socket per
// wake-up: a busy client waits for the others' turn. Accepting comes after the wake-up's events,
// so that no descriptor closed among them is reused while its stale events are still to come.
func (l *loop) run() {
	// One thread's loop, as a C event loop is; while it blocks in epoll_wait the runtime gives
	// the processor to the other goroutines (the broadcast's, -debug's).
	runtime.LockOSThread()
	for {
		n, err := unix.EpollWait(l.epfd, l.events, -1)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			log.Fatal(os.NewSyscallError("epoll_wait", err))
		}
		accept := false
		for _, ev := range l.events[:n] {
			switch fd := int(ev.Fd); fd {
			case l.lfd:
				accept = true
			case l.efd:
				l.broadcast()
			default:
				c := l.conns[fd]
				if c != nil && ev.Events&unix.EPOLLOUT != 0 {
					l.flush(c)
				}
				if c != nil && c.fd >= 0 && ev.Events&(unix.EPOLLIN|unix.EPOLLHUP|unix.EPOLLERR) != 0 {
					l.read(c)
				}
			}
		}
		if accept {
			l.accept()
		}
	}
}

func (l *loop) accept() {
	for {
		fd, _, err := unix.Accept4(l.lfd, unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC)
		switch err {
		case nil:
		case unix.EAGAIN:
			return
		case unix.EINTR, unix.ECONNABORTED:
			continue
		default:
			// EMFILE and the like: the connection waits in the backlog. A level-triggered
			// listener would wake the loop for it at once, so it leaves epoll until a close.
			log.Print(os.NewSyscallError("accept4", err))
			unix.EpollCtl(l.epfd, unix.EPOLL_CTL_DEL, l.lfd, nil)
			l.paused = true
			return
		}
		// As package net does for every Go server: a small answer is not held back by Nagle.
		unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1)
		if l.ctl(unix.EPOLL_CTL_ADD, fd, unix.EPOLLIN) != nil {
			unix.Close(fd)
			continue
		}
		if fd >= len(l.conns) {
			l.conns = append(l.conns, make([]*conn, fd+1-len(l.conns))...)
		}
		l.conns[fd] = &conn{fd: fd, member: -1}
	}
}

// read reads what c has, once, serves it, and writes the answers with one write.
func (l *loop) read(c *conn) {
	n, err := unix.Read(c.fd, l.buf)
	if err == unix.EAGAIN || err == unix.EINTR {
		return
	}
	if n <= 0 {
		l.close(c)
		return
	}
	data := l.buf[:n]
	if len(c.in) > 0 {
		c.in = append(c.in, data...)
		data = c.in
	}
	l.out = l.out[:0]
	if c.state == inHTTP {
		data = l.heads(c, data)
	}
	if c.state != inHTTP {
		data = l.frames(c, data)
	}
	if len(data) == 0 || c.closing {
		c.in = nil
	} else {
		c.in = append(c.in[:0], data...) // copy handles the overlap when data is c.in's
	}
	if len(l.out) > 0 {
		l.write(c, l.out)
	}
	if c.fd >= 0 && c.closing && len(c.out) == 0 {
		l.close(c)
	}
}

// heads answers every whole request head at the start of data, up to an upgrade, and returns
// the rest: the start of a head, or frames.
func (l *loop) heads(c *conn, data []byte) []byte {
	for c.state == inHTTP && !c.closing {
		end := bytes.Index(data, []byte("\r\n\r\n"))
		if end < 0 {
			if len(data) > maxHead {
				l.respond(c, "431 Request Header Fields Too Large", "", true)
			}
			return data
		}
		l.request(c, string(data[:end]))
		data = data[end+4:]
	}
	return data
}

func (l *loop) request(c *conn, head string) {
	line, fields, _ := strings.Cut(head, "\r\n")
	method, rest, _ := strings.Cut(line, " ")
	target, _, _ := strings.Cut(rest, " ")
	path, query, _ := strings.Cut(target, "?")
	switch {
	case method != "GET":
		// The floor does not look for bodies: anything but GET would be framed wrongly.
		l.respond(c, "405 Method Not Allowed", "", true)
	case path == "/hello":
		l.respond(c, "200 OK", wspeer.Hello, false)
	case path == "/start":
		q, err := url.ParseQuery(query)
		p, perr := wspeer.ParsePlan(q.Get)
		if err = errors.Join(err, perr); err != nil {
			l.respond(c, "400 Bad Request", err.Error(), false)
			return
		}
		p.Start(l.post)
		l.respond(c, "200 OK", "ok", false)
	case path == "/echo" || path == "/broadcast":
		l.upgrade(c, fields, path == "/broadcast")
	default:
		l.respond(c, "404 Not Found", "not found", false)
	}
}

// respond appends a text/plain answer with its length; with close, the connection ends after it.
func (l *loop) respond(c *conn, status, body string, close bool) {
	l.out = fmt.Appendf(l.out, "HTTP/1.1 %s\r\nContent-Type: text/plain\r\nContent-Length: %d\r\n", status, len(body))
	if close {
		l.out = append(l.out, "Connection: close\r\n"...)
		c.closing = true
	}
	l.out = append(append(l.out, "\r\n"...), body...)
}

// upgrade answers the opening handshake (RFC 6455 §4.2.2) and, with join, adds c to the broadcast.
func (l *loop) upgrade(c *conn, fields string, join bool) {
	var key, upgrade, version string
	for _, f := range strings.Split(fields, "\r\n") {
		name, value, _ := strings.Cut(f, ":")
		switch value = strings.TrimSpace(value); strings.ToLower(name) {
		case "sec-websocket-key":
			key = value
		case "upgrade":
			upgrade = value
		case "sec-websocket-version":
			version = value
		}
	}
	if key == "" || version != "13" || !strings.EqualFold(upgrade, "websocket") {
		l.respond(c, "400 Bad Request", "not a WebSocket upgrade", true)
		return
	}
	sum := sha1.Sum([]byte(key + guid))
	l.out = append(l.out, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: "...)
	l.out = append(base64.StdEncoding.AppendEncode(l.out, sum[:]), "\r\n\r\n"...)
	c.state = inEcho
	if join {
		c.state, c.member = inBroadcast, len(l.members)
		l.members = append(l.members, c)
	}
}

// frames serves every whole frame at the start of data and returns the rest, the start of one.
func (l *loop) frames(c *conn, data []byte) []byte {
	for !c.closing && len(data) >= 2 {
		b0, b1 := data[0], data[1]
		h := 2
		switch b1 & 0x7f {
		case 126:
			h = 4
		case 127:
			h = 10
		}
		if len(data) < h {
			return data
		}
		n := uint64(b1 & 0x7f)
		switch h {
		case 4:
			n = uint64(binary.BigEndian.Uint16(data[2:]))
		case 10:
			n = binary.BigEndian.Uint64(data[2:])
		}
		op := b0 & 0x0f
		switch {
		case b1&0x80 == 0 || b0&0x70 != 0 || (op > opBinary && op < opClose) || op > opPong:
			// §5.1: a client masks every frame; §5.2: no extension was agreed, so RSV bits are
			// 0, and reserved opcodes are refused.
			l.closeWith(c, 1002)
			return nil
		case op >= opClose && (n > 125 || b0&0x80 == 0):
			l.closeWith(c, 1002) // §5.5: control frames are short and never fragmented
			return nil
		case n > maxFrame:
			l.closeWith(c, 1009)
			return nil
		}
		if uint64(len(data)) < uint64(h+4)+n {
			return data
		}
		p := data[h+4 : h+4+int(n)]
		unmask(p, data[h:h+4])
		data = data[h+4+int(n):]
		switch op {
		case opPing:
			l.out = appendFrame(l.out, 0x80|opPong, p)
		case opPong:
		case opClose:
			// §5.5.1: the close is answered with the status code received, then the end.
			l.out = appendFrame(l.out, 0x80|opClose, p[:min(len(p), 2)])
			c.closing = true
		default:
			if c.state == inEcho {
				l.out = appendFrame(l.out, b0, p) // FIN and opcode as they came
			}
		}
	}
	return data
}

// closeWith appends a close frame with code; the connection ends once it is written.
func (l *loop) closeWith(c *conn, code uint16) {
	l.out = appendFrame(l.out, 0x80|opClose, binary.BigEndian.AppendUint16(nil, code))
	c.closing = true
}

// appendFrame appends a server frame (unmasked) with first byte b0.
func appendFrame(b []byte, b0 byte, p []byte) []byte {
	switch n := len(p); {
	case n < 126:
		b = append(b, b0, byte(n))
	case n < 1<<16:
		b = binary.BigEndian.AppendUint16(append(b, b0, 126), uint16(n))
	default:
		b = binary.BigEndian.AppendUint64(append(b, b0, 127), uint64(n))
	}
	return append(b, p...)
}

// unmask unmasks p in place, eight bytes at a time (the key repeats every four).
func unmask(p, key []byte) {
	k := uint64(binary.LittleEndian.Uint32(key))
	k |= k << 32
	i := 0
	for ; i+8 <= len(p); i += 8 {
		binary.LittleEndian.PutUint64(p[i:], binary.LittleEndian.Uint64(p[i:])^k)
	}
	for ; i < len(p); i++ {
		p[i] ^= key[i&3]
	}
}

// write sends b on c, queueing what the socket does not take. A connection whose queue would
// pass wspeer.QueueBytes is closed, the bound nbio's and dwell's servers are set up with.
func (l *loop) write(c *conn, b []byte) {
	if len(c.out) == 0 {
		n, err := unix.Write(c.fd, b)
		if err != nil && err != unix.EAGAIN && err != unix.EINTR {
			l.close(c)
			return
		}
		if b = b[max(n, 0):]; len(b) == 0 {
			return
		}
		if len(b) <= wspeer.QueueBytes {
			l.ctl(unix.EPOLL_CTL_MOD, c.fd, unix.EPOLLIN|unix.EPOLLOUT)
		}
	}
	if len(c.out)+len(b) > wspeer.QueueBytes {
		l.close(c)
		return
	}
	c.out = append(c.out, b...)
}

// flush writes what write queued, at EPOLLOUT.
func (l *loop) flush(c *conn) {
	if len(c.out) == 0 {
		return
	}
	n, err := unix.Write(c.fd, c.out)
	if err == unix.EAGAIN || err == unix.EINTR {
		return
	}
	if err != nil {
		l.close(c)
		return
	}
	if c.out = c.out[:copy(c.out, c.out[n:])]; len(c.out) > 0 {
		return
	}
	c.out = nil // a stalled client's queue is not kept once it has drained
	if c.closing {
		l.close(c)
		return
	}
	l.ctl(unix.EPOLL_CTL_MOD, c.fd, unix.EPOLLIN)
}

func (l *loop) close(c *conn) {
	if c.member >= 0 {
		last := l.members[len(l.members)-1]
		l.members[c.member], last.member = last, c.member
		l.members = l.members[:len(l.members)-1]
		c.member = -1
	}
	l.conns[c.fd] = nil
	unix.Close(c.fd) // which takes it out of epoll too: no other descriptor refers to the socket
	c.fd, c.in, c.out = -1, nil, nil
	if l.paused && l.ctl(unix.EPOLL_CTL_ADD, l.lfd, unix.EPOLLIN) == nil {
		l.paused = false
	}
}

// eventfdOne adds 1 to the eventfd's counter (any count wakes the loop; little-endian 1 where
// it matters, and non-zero anywhere).
var eventfdOne = [8]byte{1}

// post is the broadcast's send, called on Plan.Start's goroutine. It hands the payload to the
// loop rather than writing to the members itself: the connections, their queues and the
// members' list stay the loop's alone, with no lock around every write, and the hand-off
// costs an eventfd write and a wake-up per tick against the 5,000 writes of the tick.
func (l *loop) post(p []byte) {
	l.mu.Lock()
	l.pending = append(l.pending, p)
	l.mu.Unlock()
	unix.Write(l.efd, eventfdOne[:])
}

// broadcast frames the payloads posted since the last wake-up once and writes the frames to
// every member, one write each.
func (l *loop) broadcast() {
	var count [8]byte
	unix.Read(l.efd, count[:]) // resets the counter: one wake-up for every post so far
	l.mu.Lock()
	posted := l.pending
	l.pending = nil
	l.mu.Unlock()
	l.frame = l.frame[:0]
	for _, p := range posted {
		l.frame = appendFrame(l.frame, 0x80|opBinary, p)
	}
	// From the end: a member that write closes has the last one swapped into its place, which
	// has had the frames already.
	for i := len(l.members) - 1; i >= 0 && len(l.frame) > 0; i-- {
		l.write(l.members[i], l.frame)
	}
}
