//go:build linux && !dwell_portable

package netpoll

import (
	"encoding/binary"

	"golang.org/x/sys/unix"
)

// A ringPoll is the io_uring a Poller may watch descriptors with instead of epoll, with the same
// behaviour: level-triggered, each registration tagged. Each descriptor watched has a poll
// request (IORING_OP_POLL_ADD) under way, which completes once with the descriptor's events;
// Wait reads the completions, and the next Wait arms each descriptor again for what it is then
// watched for. A request armed on a ready descriptor completes at once, so a socket that still
// has bytes is reported again, as epoll reports it. A turn's requests — the arming, the changes
// of interest, the removals — reach the kernel in the one io_uring_enter of the next Wait.
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
	fds   []ringFD // by descriptor
	rearm []int32  // descriptors whose one-shot request completed, to arm at the next Wait
}

// A ringFD is what a ringPoll keeps of one descriptor.
type ringFD struct {
	tag    uint32
	gen    uint32 // the number of its request under way: completions of earlier ones are stale
	events uint32 // what it is watched for, as poll events (the same bits as epoll's)
	state  fdState
}

type fdState uint8

const (
	fdUnwatched fdState = iota
	fdArmed             // a one-shot request is under way
	fdMulti             // a multishot request is under way (see ringPoll)
	fdIdle              // its one-shot request completed: the next Wait arms it again
)

// Poll events always reported, as epoll reports them whatever a descriptor is watched for.
const alwaysReported = unix.POLLERR | unix.POLLHUP | unix.POLLNVAL

// The kernel's numbers for poll requests (linux/io_uring.h).
const (
	pollAddMulti = 1 << 0 // IORING_POLL_ADD_MULTI, in a POLL_ADD's len
	cqeFMore     = 1 << 1 // IORING_CQE_F_MORE: the request stays armed after this completion

	// removeData marks the completions of removals, which say nothing a Poller reports.
	removeData = ^uint64(0)
)

func newRingPoll(entries uint32) (*ringPoll, error) {
	r, err := newRing(entries)
	if err != nil {
		return nil, err
	}
	// The tables start large enough for thousands of descriptors, as the loop's own by
	// descriptor do (serve's Loop.Conns): growing copies them and leaves the old as garbage,
	// while the pages of a fresh allocation cost memory only once they are written.
	return &ringPoll{r: r, fds: make([]ringFD, 0, initialFDs), rearm: make([]int32, 0, 256)}, nil
}

// initialFDs is the descriptors a ringPoll's table holds before it grows.
const initialFDs = 8192

// userData names request gen of descriptor fd in its completion.
func userData(fd int, gen uint32) uint64 { return uint64(gen)<<32 | uint64(uint32(fd)) }

// add registers fd, as Poller.Add.
func (rp *ringPoll) add(fd int, tag uint32, events uint32) Errno {
	for fd >= len(rp.fds) {
		rp.fds = append(rp.fds, ringFD{})
	}
	e := &rp.fds[fd]
	if e.state != fdUnwatched {
		return unix.EEXIST
	}
	e.tag, e.events = tag, events
	return rp.arm(fd, e, false)
}

// mod changes what fd is watched for, as Poller.Mod. A request under way for other events is
// removed and another armed; an idle descriptor is armed by the next Wait, for these.
func (rp *ringPoll) mod(fd int, tag uint32, events uint32) Errno {
	if fd >= len(rp.fds) || rp.fds[fd].state == fdUnwatched {
		return unix.ENOENT
	}
	e := &rp.fds[fd]
	e.tag = tag
	if e.events == events {
		return 0
	}
	e.events = events
	if e.state == fdIdle {
		return 0
	}
	if err := rp.remove(fd, e); err != 0 {
		return err
	}
	return rp.arm(fd, e, false)
}

// del stops watching fd, as Poller.Del.
func (rp *ringPoll) del(fd int) Errno {
	if fd >= len(rp.fds) {
		return 0
	}
	e := &rp.fds[fd]
	switch e.state {
	case fdArmed, fdMulti:
		if err := rp.remove(fd, e); err != 0 {
			return err
		}
	}
	e.state = fdUnwatched
	return 0
}

// arm queues a poll request for e, fd's, multishot or not.
func (rp *ringPoll) arm(fd int, e *ringFD, multi bool) Errno {
	s, err := rp.r.next()
	if err != 0 {
		return err
	}
	e.gen++
	s.opcode = opPollAdd
	s.fd = int32(fd)
	s.opFlags = poll32(e.events)
	s.userData = userData(fd, e.gen)
	e.state = fdArmed
	if multi {
		s.len = pollAddMulti
		e.state = fdMulti
	}
	return 0
}

// remove queues the removal of e's request under way; its completions are stale from now on.
func (rp *ringPoll) remove(fd int, e *ringFD) Errno {
	s, err := rp.r.next()
	if err != 0 {
		return err
	}
	s.opcode = opPollRemove
	s.fd = -1
	s.addr = userData(fd, e.gen)
	s.userData = removeData
	e.gen++
	return 0
}

// wait arms the descriptors whose requests completed, submits what was queued, and moves the
// completions of current requests into events, without waiting. It returns how many there are.
func (rp *ringPoll) wait(events []Event) (int, Errno) {
	for _, fd := range rp.rearm {
		if e := &rp.fds[fd]; e.state == fdIdle {
			if err := rp.arm(int(fd), e, false); err != 0 {
				return 0, err
			}
		}
	}
	rp.rearm = rp.rearm[:0]
	if err := rp.r.submit(0); err != 0 {
		return 0, err
	}
	ready, n := rp.r.ready(), 0
	var i uint32
	for ; i < ready && n < len(events); i++ {
		c := rp.r.cqe(i)
		fd, gen := int(uint32(c.userData)), uint32(c.userData>>32)
		if c.userData == removeData || fd >= len(rp.fds) || rp.fds[fd].gen != gen {
			continue // a removal's, or a request's since removed
		}
		e := &rp.fds[fd]
		more := c.flags&cqeFMore != 0
		if !more {
			e.state = fdIdle
			rp.rearm = append(rp.rearm, int32(fd))
		}
		var ev uint32
		switch {
		case c.res == -int32(unix.EINVAL) && e.events&unix.EPOLLEXCLUSIVE != 0:
			// A kernel whose poll requests take no EPOLLEXCLUSIVE: a shared listening socket
			// wakes every loop's, as it would without the flag.
			e.events &^= unix.EPOLLEXCLUSIVE
			continue
		case c.res < 0:
			// The request failed (the descriptor is not a pollable one, or memory ran out):
			// the descriptor is reported failed, as one epoll cannot watch is, and not armed
			// again.
			ev = unix.EPOLLERR | unix.EPOLLHUP
			e.state = fdUnwatched
		default:
			ev = uint32(c.res) & (e.events | alwaysReported)
		}
		if ev == 0 {
			// Only what the descriptor is not watched for (see ringPoll): wait for its next
			// wake-up instead.
			if !more {
				if err := rp.arm(fd, e, true); err != 0 {
					return 0, err
				}
			}
			continue
		}
		events[n] = Event{Events: ev, Fd: int32(fd), Pad: int32(e.tag)}
		n++
	}
	rp.r.consume(i)
	return n, 0
}

func (rp *ringPoll) close() { rp.r.close() }
func (rp *ringPoll) unmap() { rp.r.unmap() }

// poll32 returns poll events as a submission's poll32_events holds them: their 16-bit halves
// swapped on a big-endian machine (linux/io_uring.h).
func poll32(ev uint32) uint32 {
	if bigEndian {
		return ev<<16 | ev>>16
	}
	return ev
}

var bigEndian = binary.NativeEndian.Uint16([]byte{0, 1}) == 1
