//go:build linux && !dwell_portable

package netpoll

import (
	"encoding/binary"

	"golang.org/x/sys/unix"
)

// A ringPoll is the io_uring a Poller may watch descriptors with instead of epoll, with the same
// behaviour: level-triggered, each registration tagged. A descriptor is watched with a poll
// request (IORING_OP_POLL_ADD), which completes once with its events; Wait reads the
// completions, and the next Wait arms the descriptor again for what it is then watched for. A
// request armed on a ready descriptor completes at once, so a socket that still has bytes is
// reported again, as epoll reports it. A turn's requests — the arming, the changes of interest,
// the removals, the receives and sends — reach the kernel in the one io_uring_enter of the next
// Wait: each descriptor whose requests must change is marked dirty during the turn, and Wait
// brings its requests in line with what it is watched for (reconcile).
//
// A socket the poller owns (own) is read and written by the ring itself, which spares the loop
// a read and a write system call per request: see ringio_linux.go.
//
// One difference of the kernel's is hidden here: a poll request always reports the peer's
// shutdown (POLLRDHUP), watched or not, where epoll reports it only to those that ask. A socket
// whose peer has shut down its side, watched without WatchHangup (the loop reads what came
// before the end first), would complete every request at once, and the loop would spin. When a
// completion has nothing the descriptor is watched for, it is not reported, and the descriptor
// is armed with a multishot request instead, which completes on each later wake-up of the socket
// (an error, a reset, room to write) rather than while a state lasts.
type ringPoll struct {
	r     *ring
	bufs  *recvBufs // the receives' buffers; nil when the kernel refused them: no socket is owned
	fds   []ringFD  // by descriptor, in a mapping of their own (ringfds_linux.go)
	hi    int       // the highest descriptor entered in fds
	dirty []int32   // descriptors whose requests the next Wait reconciles

	sends     []*sendReq       // the sends under way, and free ones (see ringio_linux.go)
	freeSends []int32          // indexes of sends not in use
	kept      map[int32][]byte // received bytes moved out of the ring's buffers, by descriptor
	busy      int              // receives and sends under way: the ring's buffers are in use
}

// A ringFD is what a ringPoll keeps of one descriptor, in 24 bytes.
type ringFD struct {
	tag    uint32
	pgen   uint16   // the number of its poll request: completions of earlier ones are stale
	rgen   uint16   // the number of its receive, likewise
	events fdEvents // what it is watched for
	polled fdEvents // what its poll request under way asks for
	state  fdState
	flags  fdFlags

	// An owned socket's received bytes not read yet (ringio_linux.go): in buffer bid of the
	// ring's from roff, rres of them; or kept; or rres is the end of input (0, fdEnd) or a
	// negated errno.
	bid   uint16
	roff  uint16
	rres  int16  // maxRecv fits
	rsize uint16 // what its last read asked for, and its next receive takes (0: firstRecv)
	send  int32  // 1 + the index of its send, under way or completed and not yet taken (Sent)
}

// fdEvents are what a descriptor may be watched for, in a byte: an Interest, and whether a
// listening socket shared between loops wakes one of them only (EPOLLEXCLUSIVE).
type fdEvents uint8

const (
	evIn        = fdEvents(WatchRead)
	evOut       = fdEvents(WatchWrite)
	evRDHUP     = fdEvents(WatchHangup)
	evExclusive = fdEvents(1 << 3)
)

// poll returns f as poll events (epoll's bits, which poll requests take).
func (f fdEvents) poll() uint32 {
	ev := epollEvents(Interest(f &^ evExclusive))
	if f&evExclusive != 0 {
		ev |= unix.EPOLLEXCLUSIVE
	}
	return ev
}

type fdState uint8

const (
	fdIdle  fdState = iota // no poll request under way
	fdArmed                // a one-shot poll request is under way
	fdMulti                // a multishot poll request is under way (see ringPoll)
	fdDead                 // its poll request failed: it is reported failed, and not armed again
)

type fdFlags uint8

const (
	fdWatched fdFlags = 1 << iota // registered (Add)
	fdDirty                       // in dirty
	fdOwned                       // read and written by the ring (own)
	fdRecv                        // a receive is under way
	fdInBuf                       // received bytes wait in the ring's buffer bid
	fdKept                        // received bytes wait in kept
	fdEnd                         // the receives ended: rres is 0 (the end of input) or an errno
	fdMore                        // its last receive filled its length: more bytes may wait
)

// Poll events always reported, as epoll reports them whatever a descriptor is watched for.
const alwaysReported = unix.POLLERR | unix.POLLHUP | unix.POLLNVAL

// The kernel's numbers for poll requests (linux/io_uring.h).
const (
	pollAddMulti = 1 << 0 // IORING_POLL_ADD_MULTI, in a POLL_ADD's len
	cqeFMore     = 1 << 1 // IORING_CQE_F_MORE: the request stays armed after this completion
)

// A completion's user_data names its request: the kind in the top two bits, a number of the
// request's (its descriptor's pgen or rgen, its send's gen) in the next 30, and the descriptor
// or the send's index in the low 32.
const (
	kindPoll  = 0
	kindRecv  = 1
	kindSend  = 2
	kindOther = 3 // removals and cancellations, whose completions say nothing a Poller reports

	genMask   = 1<<30 - 1
	otherData = ^uint64(0)
)

func userData(kind, gen uint32, id int) uint64 {
	return uint64(kind)<<62 | uint64(gen&genMask)<<32 | uint64(uint32(id))
}

func newRingPoll(entries uint32) (*ringPoll, error) {
	r, err := newRing(entries)
	if err != nil {
		return nil, err
	}
	fds, err := mapFDs(nil, 0, fdTableStart)
	if err != nil {
		r.close()
		return nil, err
	}
	rp := &ringPoll{r: r, fds: fds, dirty: make([]int32, 0, 256)}
	// A kernel that takes no buffer ring still polls; its sockets are read and written by the
	// loop, as under epoll.
	rp.bufs, _ = newRecvBufs(r)
	return rp, nil
}

// entry returns fd's entry, growing the table to hold it (see mapFDs).
func (rp *ringPoll) entry(fd int) *ringFD {
	if fd >= len(rp.fds) {
		n := max(len(rp.fds), fdTableStart)
		for n <= fd {
			n *= 2
		}
		fds, err := mapFDs(rp.fds, rp.hi+1, n)
		if err != nil {
			panic("dwell: " + err.Error() + " (growing the io_uring poller's table of descriptors)")
		}
		rp.fds = fds
	}
	rp.hi = max(rp.hi, fd)
	return &rp.fds[fd]
}

// watched returns fd's entry if it is registered, else nil.
func (rp *ringPoll) watched(fd int) *ringFD {
	if fd < 0 || fd > rp.hi || rp.fds[fd].flags&fdWatched == 0 {
		return nil
	}
	return &rp.fds[fd]
}

// markDirty has the next Wait reconcile fd's requests.
func (rp *ringPoll) markDirty(fd int, e *ringFD) {
	if e.flags&fdDirty == 0 {
		e.flags |= fdDirty
		rp.dirty = append(rp.dirty, int32(fd))
	}
}

// add registers fd, as Poller.Add.
func (rp *ringPoll) add(fd int, tag uint32, events fdEvents) Errno {
	e := rp.entry(fd)
	if e.flags&fdWatched != 0 {
		return unix.EEXIST
	}
	// The numbers go on from the descriptor's earlier registrations, whose completions may
	// still come.
	*e = ringFD{tag: tag, events: events, pgen: e.pgen, rgen: e.rgen, rsize: e.rsize, flags: fdWatched}
	rp.markDirty(fd, e)
	return 0
}

// mod changes what fd is watched for, as Poller.Mod: its requests change at the next Wait.
func (rp *ringPoll) mod(fd int, tag uint32, events fdEvents) Errno {
	e := rp.watched(fd)
	if e == nil {
		return unix.ENOENT
	}
	e.tag = tag
	if e.events != events {
		e.events = events
		rp.markDirty(fd, e)
	}
	return 0
}

// del stops watching fd, as Poller.Del: its requests under way are removed (a receive or a send
// cancelled), bytes received and not read are dropped.
func (rp *ringPoll) del(fd int) Errno {
	e := rp.watched(fd)
	if e == nil {
		return 0
	}
	if e.state == fdArmed || e.state == fdMulti {
		if err := rp.queue(opPollRemove, userData(kindPoll, uint32(e.pgen), fd)); err != 0 {
			return err
		}
	}
	if e.flags&fdRecv != 0 {
		if err := rp.queue(opAsyncCancel, userData(kindRecv, uint32(e.rgen), fd)); err != 0 {
			return err
		}
	}
	if e.send != 0 {
		if err := rp.orphanSend(e); err != 0 {
			return err
		}
	}
	rp.dropReceived(fd, e)
	*e = ringFD{pgen: e.pgen + 1, rgen: e.rgen + 1, rsize: e.rsize, flags: e.flags & fdDirty}
	return 0
}

// queue queues a removal or cancellation of the request named data.
func (rp *ringPoll) queue(op uint8, data uint64) Errno {
	s, err := rp.r.next()
	if err != 0 {
		return err
	}
	s.opcode = op
	s.fd = -1
	s.addr = data
	s.userData = otherData
	return 0
}

// armPoll queues a poll request for e, fd's, for events, multishot or not.
func (rp *ringPoll) armPoll(fd int, e *ringFD, events fdEvents, multi bool) Errno {
	s, err := rp.r.next()
	if err != 0 {
		return err
	}
	e.pgen++
	s.opcode = opPollAdd
	s.fd = int32(fd)
	s.opFlags = poll32(events.poll())
	s.userData = userData(kindPoll, uint32(e.pgen), fd)
	e.polled = events
	e.state = fdArmed
	if multi {
		s.len = pollAddMulti
		e.state = fdMulti
	}
	return 0
}

// reconcile brings fd's requests in line with what it is watched for, and returns the events to
// report now: an owned socket's bytes received and not read, while it is watched for them.
func (rp *ringPoll) reconcile(fd int, e *ringFD) (uint32, Errno) {
	want, report := e.events, uint32(0)
	needPoll := true
	if e.flags&fdOwned != 0 {
		var err Errno
		want, report, err = rp.reconcileOwned(fd, e)
		if err != 0 {
			return 0, err
		}
		// Its receive reports a failure or the end; a poll request is needed for more only.
		needPoll = want != 0 || e.events&evIn == 0
	}
	if e.state == fdArmed || e.state == fdMulti {
		if e.polled == want && needPoll {
			return report, 0
		}
		if err := rp.queue(opPollRemove, userData(kindPoll, uint32(e.pgen), fd)); err != 0 {
			return 0, err
		}
		e.pgen++
		e.state = fdIdle
	}
	if e.state == fdIdle && needPoll {
		if err := rp.armPoll(fd, e, want, false); err != 0 {
			return 0, err
		}
	}
	return report, 0
}

// wait reconciles the dirty descriptors, submits what was queued, and moves the completions of
// current requests into events, without waiting. It returns how many there are. Completions that
// report nothing may leave requests to make (a receive that found no buffer, a multishot poll
// armed): with no event to return, wait makes them at once, rather than leave the loop to sleep
// on a ring that has nothing under way for them.
func (rp *ringPoll) wait(events []Event) (int, Errno) {
	for range 4 {
		n, err := rp.turn(events)
		if n > 0 || err != 0 || len(rp.dirty) == 0 && rp.r.tail == rp.r.flushed {
			return n, err
		}
	}
	return 0, 0
}

// turn is one pass of wait.
func (rp *ringPoll) turn(events []Event) (int, Errno) {
	n, done := 0, 0
	for _, fd := range rp.dirty {
		if n == len(events) {
			break // the rest reports with the next Wait
		}
		done++
		e := &rp.fds[fd]
		e.flags &^= fdDirty
		if e.flags&fdWatched == 0 || e.state == fdDead {
			continue
		}
		ev, err := rp.reconcile(int(fd), e)
		if err != 0 {
			return 0, err
		}
		if ev != 0 {
			events[n] = Event{Events: ev, Fd: fd, Pad: int32(e.tag)}
			n++
			rp.markDirty(int(fd), e) // reported again each Wait until read, as epoll would
		}
	}
	rp.dirty = rp.dirty[:copy(rp.dirty, rp.dirty[done:])]
	if err := rp.r.submit(0); err != 0 {
		return 0, err
	}
	ready := rp.r.ready()
	var i uint32
	for ; i < ready && n < len(events); i++ {
		fd, ev := rp.complete(rp.r.cqe(i))
		if ev != 0 {
			events[n] = Event{Events: ev, Fd: int32(fd), Pad: int32(rp.fds[fd].tag)}
			n++
		}
	}
	rp.r.consume(i)
	return n, 0
}

// complete takes completion c, and returns its descriptor and the events to report (0 for none).
func (rp *ringPoll) complete(c *cqe) (int, uint32) {
	switch c.userData >> 62 {
	case kindPoll:
		return rp.polled(c)
	case kindRecv:
		return rp.received(c)
	case kindSend:
		return rp.sent(c)
	}
	return 0, 0 // a removal's or a cancellation's
}

// polled takes a poll request's completion c, and returns its descriptor and the events to
// report (0 for none).
func (rp *ringPoll) polled(c *cqe) (int, uint32) {
	fd, gen := int(uint32(c.userData)), uint32(c.userData>>32)&genMask
	e := rp.watched(fd)
	if e == nil || uint32(e.pgen) != gen || e.state == fdDead {
		return 0, 0 // a request's since removed
	}
	more := c.flags&cqeFMore != 0
	if !more {
		e.state = fdIdle
		rp.markDirty(fd, e)
	}
	var ev uint32
	switch {
	case c.res == -int32(unix.EINVAL) && e.polled&evExclusive != 0:
		// A kernel whose poll requests take no EPOLLEXCLUSIVE: a shared listening socket
		// wakes every loop's, as it would without the flag.
		e.events &^= evExclusive
		return 0, 0
	case c.res < 0:
		// The request failed (the descriptor is not a pollable one, or memory ran out): the
		// descriptor is reported failed, as one epoll cannot watch is, and not armed again.
		e.state = fdDead
		return fd, unix.EPOLLERR | unix.EPOLLHUP
	default:
		ev = uint32(c.res) & (e.polled & e.events).poll()
		ev |= uint32(c.res) & alwaysReported
	}
	if ev == 0 && !more {
		// Only what the descriptor is not watched for (see ringPoll): wait for its next
		// wake-up instead.
		if rp.armPoll(fd, e, e.polled, true) != 0 {
			return 0, 0 // the next Wait arms it again, one-shot
		}
	}
	return fd, ev
}

func (rp *ringPoll) close() {
	rp.drain()
	rp.r.close()
	rp.free()
}

func (rp *ringPoll) unmap() {
	rp.drain()
	rp.r.unmap()
	rp.free()
}

// free releases the table and the receive buffers of a closed ring.
func (rp *ringPoll) free() {
	unmapFDs(rp.fds)
	rp.fds, rp.hi = nil, -1
	rp.freeBufs()
}

// poll32 returns poll events as a submission's poll32_events holds them: their 16-bit halves
// swapped on a big-endian machine (linux/io_uring.h).
func poll32(ev uint32) uint32 {
	if bigEndian {
		return ev<<16 | ev>>16
	}
	return ev
}

var bigEndian = binary.NativeEndian.Uint16([]byte{0, 1}) == 1
