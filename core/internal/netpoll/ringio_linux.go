//go:build linux && !dwell_portable

package netpoll

import (
	"sync"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// A socket a ringPoll owns is read and written by the ring, so that a request costs the loop no
// system call of its own: the turn's receives and sends go to the kernel in the one
// io_uring_enter of the Wait, with the arming of the other descriptors.
//
// Reading: while the socket is watched for input and none waits, a receive is under way
// (IORING_OP_RECV), which takes one of the ring's buffers (recvBufs) when bytes arrive. Its
// completion is reported as readability, and Read copies from that buffer, which goes back to
// the ring once read; the next receive is armed when all is read. A receive takes no more than
// the socket's last read asked for (firstRecv before the loop has read it), since bytes
// once received cannot go back to the kernel: a loop that reads little at a time, so as to leave
// what follows a request in the kernel while its handler waits (HTTP/1.1's head reads), leaves it
// there on the ring as well. Bytes still unread at the next Wait (a handler that does not want
// them yet) are copied out of the ring's buffer into memory of their own (kept), so that the
// ring's buffers serve one turn only and a crowd of idle readers cannot exhaust them. The end of
// input and a failure stay, reported again each Wait while watched, as epoll reports them.
//
// Writing: Send queues a send of the gathered buffers (IORING_OP_SEND or SENDMSG, with
// MSG_WAITALL: the kernel sends them all, waiting for room as it must) and keeps references to
// them until it completes: their bytes are the kernel's to read until then. One send is under way
// per socket at most; its completion is reported as writability, and Sent returns its result.
// Room to write is polled for only while no send is under way: for what the caller writes to the
// socket itself (a file's segments, which go out with sendfile; TLS's handshake flights and
// closing alert, which its transport writes).
//
// A send's buffers are Go memory: the references the send keeps (its iovecs' bases, real
// pointers) keep the collector from freeing them while the kernel reads them, also after the
// socket is closed and the send cancelled, until its completion comes.
type sendReq struct {
	fd     int32
	gen    uint32
	orphan bool         // its socket was closed: its completion only frees it
	done   bool         // it completed with res, which Sent has not taken yet
	res    int32        // the bytes it sent, or a negated errno
	iov    []unix.Iovec // the buffers it sends, kept alive until it completes
	msg    unix.Msghdr  // SENDMSG's header, for more than one buffer
}

// firstRecv is what a socket's receive takes before the loop has read it: enough for the first
// request of most clients (a request head; HTTP/2's preface and settings),
// little enough that what follows it costs the loop little while that request waits.
const firstRecv = 256

// own has the ring read and write fd, registered and not yet polled, and reports whether it
// does (it does not when the kernel took no buffer ring).
func (rp *ringPoll) own(fd int) bool {
	e := rp.watched(fd)
	if rp.bufs == nil || e == nil {
		return false
	}
	e.flags |= fdOwned
	rp.markDirty(fd, e)
	return true
}

// owns reports whether fd is a socket the ring reads and writes (own).
func (rp *ringPoll) owns(fd int) bool {
	e := rp.watched(fd)
	return e != nil && e.flags&fdOwned != 0
}

// reconcileOwned arms an owned socket's receive when it is watched for input and none waits,
// moves bytes still unread out of the ring's buffer, and returns what its poll request must ask
// for (what the receive and the send under way do not report) and the events to report now.
func (rp *ringPoll) reconcileOwned(fd int, e *ringFD) (want fdEvents, report uint32, err Errno) {
	reading := e.events&evIn != 0
	switch {
	case e.flags&fdEnd != 0 && e.rres < 0:
		report = unix.EPOLLERR | unix.EPOLLHUP
	case e.flags&(fdInBuf|fdKept|fdEnd) != 0:
		if e.flags&fdInBuf != 0 {
			rp.keep(fd, e)
		}
		if reading {
			report = unix.EPOLLIN
			if e.flags&fdEnd != 0 {
				report |= (e.events & evRDHUP).poll()
			}
		}
	case reading && e.flags&fdRecv == 0:
		if err := rp.armRecv(fd, e); err != 0 {
			return 0, 0, err
		}
	}
	want = e.events &^ evIn
	if reading {
		want &^= evRDHUP // the receive meets the end
	}
	if e.send != 0 {
		// The send under way reports room when it completes; one that has completed reports
		// it until Sent takes its result.
		want &^= evOut
		if rp.sends[e.send-1].done {
			report |= (e.events & evOut).poll()
		}
	}
	return want, report, 0
}

// recvLen is what e's receive takes: no more than the loop's last read of it asked for (see
// above). A read while the receive is under way may change it; fdMore, which a receive that
// took as much sets, is a hint that the socket had more, not a promise.
func (e *ringFD) recvLen() int {
	if e.rsize == 0 {
		return firstRecv
	}
	return int(e.rsize)
}

// armRecv queues a receive for fd, into a buffer of the ring's.
func (rp *ringPoll) armRecv(fd int, e *ringFD) Errno {
	s, err := rp.r.next()
	if err != 0 {
		return err
	}
	e.rgen++
	s.opcode = opRecv
	s.fd = int32(fd)
	s.flags = sqeBufferSelect
	s.len = uint32(e.recvLen())
	if e.flags&fdMore == 0 {
		// The last receive took less than it could, and the loop has read it: the socket most
		// likely has nothing, and the kernel would try it in vain before waiting for bytes.
		s.ioprio = recvPollFirst
	}
	s.bufGroup = rp.bufs.group(int(s.len)).gid
	s.userData = userData(kindRecv, uint32(e.rgen), fd)
	e.flags |= fdRecv
	rp.busy++
	return 0
}

// received takes a receive's completion c, and returns its descriptor and the events to report.
func (rp *ringPoll) received(c *cqe) (int, uint32) {
	rp.busy--
	fd, gen := int(uint32(c.userData)), uint32(c.userData>>32)&genMask
	e := rp.watched(fd)
	if e == nil || uint32(e.rgen) != gen || e.flags&fdRecv == 0 {
		// A receive of a socket since closed: its buffer goes back.
		if c.flags&cqeFBuffer != 0 {
			rp.bufs.give(uint16(c.flags >> cqeBufferShift))
		}
		return 0, 0
	}
	e.flags &^= fdRecv
	rp.markDirty(fd, e) // the next Wait arms the next receive, or moves these bytes out
	switch {
	case c.res > 0:
		e.bid, e.roff, e.rres = uint16(c.flags>>cqeBufferShift), 0, int16(c.res)
		e.flags = e.flags&^fdMore | fdInBuf
		if int(c.res) == e.recvLen() {
			e.flags |= fdMore // it took all it could: more may wait
		}
	case c.res == -int32(unix.ENOBUFS):
		return 0, 0 // the turn's receives took every buffer: the next Wait asks again
	default:
		if c.flags&cqeFBuffer != 0 {
			rp.bufs.give(uint16(c.flags >> cqeBufferShift))
		}
		e.rres = int16(max(c.res, -4095)) // 0: the end of input; or an errno
		e.flags |= fdEnd
		if c.res < 0 {
			return fd, unix.EPOLLERR | unix.EPOLLHUP
		}
	}
	if e.events&evIn == 0 {
		return fd, 0
	}
	if e.flags&fdEnd != 0 {
		return fd, (e.events & (evIn | evRDHUP)).poll()
	}
	return fd, unix.EPOLLIN
}

// read copies into b what the ring received for fd, an owned socket: EAGAIN when nothing waits,
// 0 bytes at the end of input. When the ring's bytes do not fill b and its last receive took all
// it could, the rest is read from the socket at once (readMore), so that a large read — a
// request body's — costs a system call, as under epoll, rather than a turn of the loop for each
// of the ring's buffers.
func (rp *ringPoll) read(fd int, b []byte) (int, Errno) {
	e := rp.entry(fd)
	if len(b) > 0 {
		e.rsize = uint16(min(len(b), maxRecv))
	}
	if e.flags&fdOwned == 0 {
		return Read(fd, b)
	}
	n := 0
	switch {
	case e.flags&fdInBuf != 0:
		n = copy(b, rp.bufs.buf(e.bid)[e.roff:int(e.roff)+int(e.rres)])
		e.roff += uint16(n)
		e.rres -= int16(n)
		if e.rres == 0 {
			rp.bufs.give(e.bid)
			e.flags &^= fdInBuf
		}
		rp.markDirty(fd, e)
	case e.flags&fdKept != 0:
		k := rp.kept[int32(fd)]
		n = copy(b, k)
		if n == len(k) {
			delete(rp.kept, int32(fd))
			e.flags &^= fdKept
		} else {
			rp.kept[int32(fd)] = k[n:]
		}
		rp.markDirty(fd, e)
	}
	if n < len(b) && e.flags&(fdMore|fdInBuf|fdKept|fdRecv|fdEnd) == fdMore {
		n += rp.readMore(fd, e, b[n:])
	}
	switch {
	case n > 0:
		return n, 0
	case e.flags&fdEnd == 0:
		return 0, unix.EAGAIN
	case e.rres < 0:
		return 0, Errno(-e.rres)
	}
	return 0, 0
}

// readMore reads into b from fd's socket itself. Only when no receive is under way and nothing
// the ring received waits: the bytes cannot come in another order. A socket found empty, ended
// or failed is left to the receives again, which report it.
func (rp *ringPoll) readMore(fd int, e *ringFD, b []byte) int {
	n, err := Read(fd, b)
	switch {
	case n > 0:
		if n < len(b) {
			e.flags &^= fdMore // it had no more: the next receive waits for bytes first
		}
		return n
	case err == 0: // the end of input
		e.rres = 0
		e.flags |= fdEnd
	case err != unix.EAGAIN && err != unix.EINTR:
		e.rres = -int16(err)
		e.flags |= fdEnd
	}
	e.flags &^= fdMore
	rp.markDirty(fd, e)
	return 0
}

// keep moves fd's unread bytes out of the ring's buffer, which goes back to the ring.
func (rp *ringPoll) keep(fd int, e *ringFD) {
	if rp.kept == nil {
		rp.kept = make(map[int32][]byte)
	}
	rp.kept[int32(fd)] = append([]byte(nil), rp.bufs.buf(e.bid)[e.roff:int(e.roff)+int(e.rres)]...)
	rp.bufs.give(e.bid)
	e.flags = e.flags&^fdInBuf | fdKept
}

// dropReceived gives up fd's unread bytes.
func (rp *ringPoll) dropReceived(fd int, e *ringFD) {
	if e.flags&fdInBuf != 0 {
		rp.bufs.give(e.bid)
	}
	if e.flags&fdKept != 0 {
		delete(rp.kept, int32(fd))
	}
}

// send queues a send of iov's buffers to fd, an owned socket with no send under way; more
// says more follows at once (MSG_MORE). The buffers stay the kernel's until the send completes.
func (rp *ringPoll) send(fd int, iov *IOVecs, more bool) Errno {
	e := rp.watched(fd)
	if e == nil || e.flags&fdOwned == 0 || e.send != 0 {
		return unix.EINVAL
	}
	s, err := rp.r.next()
	if err != 0 {
		return err
	}
	var i int32
	if k := len(rp.freeSends); k > 0 {
		i = rp.freeSends[k-1]
		rp.freeSends = rp.freeSends[:k-1]
	} else {
		rp.sends = append(rp.sends, &sendReq{})
		i = int32(len(rp.sends) - 1)
	}
	q := rp.sends[i]
	q.fd, q.orphan, q.done = int32(fd), false, false
	q.iov = append(q.iov[:0], iov.v...)
	s.fd = int32(fd)
	s.opFlags = unix.MSG_WAITALL | unix.MSG_NOSIGNAL
	if more {
		s.opFlags |= unix.MSG_MORE
	}
	if len(q.iov) == 1 {
		s.opcode = opSend
		s.addr = uint64(uintptr(unsafe.Pointer(q.iov[0].Base)))
		s.len = uint32(q.iov[0].Len)
	} else {
		// The header and the iovecs are read when the kernel takes the submission: q is
		// allocated on its own and never moves.
		q.msg = unix.Msghdr{Iov: unsafe.SliceData(q.iov)}
		q.msg.SetIovlen(len(q.iov))
		s.opcode = opSendmsg
		s.addr = uint64(uintptr(unsafe.Pointer(&q.msg)))
	}
	s.userData = userData(kindSend, q.gen, int(i))
	e.send = i + 1
	rp.busy++
	rp.markDirty(fd, e) // its poll request no longer asks for room
	return 0
}

// sentResult returns the result of fd's last send, once: the bytes it sent, or its error; busy
// says a send is still under way.
func (rp *ringPoll) sentResult(fd int) (n int, err Errno, busy bool) {
	e := rp.watched(fd)
	if e == nil || e.send == 0 {
		return 0, 0, false
	}
	i := e.send - 1
	q := rp.sends[i]
	if !q.done {
		return 0, 0, true
	}
	e.send = 0
	res := q.res
	rp.freeSend(i)
	if res < 0 {
		return 0, Errno(-res), false
	}
	return int(res), 0, false
}

// sending returns the bytes of fd's send under way, 0 for none.
func (rp *ringPoll) sending(fd int) int {
	n := 0
	if e := rp.watched(fd); e != nil && e.send != 0 {
		for _, v := range rp.sends[e.send-1].iov { // emptied when the send completes
			n += int(v.Len)
		}
	}
	return n
}

// sent takes a send's completion c, and returns its descriptor and the events to report: the
// send's buffers are the kernel's no longer, and its result waits for Sent.
func (rp *ringPoll) sent(c *cqe) (int, uint32) {
	rp.busy--
	i := int32(uint32(c.userData))
	q := rp.sends[i]
	clear(q.iov)
	q.iov = q.iov[:0]
	q.msg = unix.Msghdr{}
	if q.orphan {
		rp.freeSend(i)
		return 0, 0
	}
	q.done, q.res = true, c.res
	fd := int(q.fd)
	e := &rp.fds[fd]
	rp.markDirty(fd, e) // its poll request may ask for room again
	return fd, (e.events & evOut).poll()
}

// freeSend makes send i free for another.
func (rp *ringPoll) freeSend(i int32) {
	q := rp.sends[i]
	q.gen++
	q.done, q.orphan = false, false
	rp.freeSends = append(rp.freeSends, i)
}

// orphanSend detaches e's send from its socket, which is closing: a completed one is freed; one
// under way is cancelled, and its completion frees it, its buffers alive until then.
func (rp *ringPoll) orphanSend(e *ringFD) Errno {
	i := e.send - 1
	q := rp.sends[i]
	e.send = 0
	if q.done {
		rp.freeSend(i)
		return 0
	}
	q.orphan = true
	return rp.queue(opAsyncCancel, userData(kindSend, q.gen, int(i)))
}

// drainWait bounds how long a closing ring waits for the kernel to end its requests (drain).
const drainWait = time.Second

// drain cancels every request still under way on a ring about to be closed, and reads the
// completions until the receives and sends have all ended or drainWait has passed, so that their
// buffers may be freed with the ring. A cancelled request ends at once, unless the kernel is in
// the middle of it.
func (rp *ringPoll) drain() {
	if rp.busy == 0 || rp.r.sqTail == nil {
		return
	}
	s, err := rp.r.next()
	if err != 0 {
		return
	}
	s.opcode = opAsyncCancel
	s.fd = -1
	s.opFlags = cancelAny
	s.userData = otherData
	for deadline := time.Now().Add(drainWait); rp.busy > 0 && time.Now().Before(deadline); {
		if rp.r.waitFor(drainWait/10) != 0 {
			return
		}
		ready := rp.r.ready()
		for i := range ready {
			rp.complete(rp.r.cqe(i)) // a ring closing reports nothing
		}
		rp.r.consume(ready)
	}
}

// freeBufs unmaps the receive buffers once the ring is closed, unless receives or sends may still
// be under way in the kernel (drain gave up on them; its requests end asynchronously after the
// close): their buffers are then left as they are, the ring's mappings and the sends' memory
// alike, for the life of the process, rather than given to anything else the kernel might still
// write to or read.
func (rp *ringPoll) freeBufs() {
	if rp.bufs == nil {
		return
	}
	if rp.busy > 0 {
		leftBusy.Lock()
		leftBusy.rings = append(leftBusy.rings, rp)
		leftBusy.Unlock()
		return
	}
	rp.bufs.unmap()
	rp.bufs = nil
}

// leftBusy holds the ringPolls closed with requests under way (see freeBufs).
var leftBusy struct {
	sync.Mutex
	rings []*ringPoll
}
