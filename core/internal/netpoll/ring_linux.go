//go:build linux && !dwell_portable

package netpoll

import (
	"fmt"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// A ring is one io_uring instance (io_uring_setup(2)): a submission queue the loop fills with
// requests and a completion queue the kernel fills with their results, both in memory mapped
// from the kernel and shared with it, so that a turn's requests cost one io_uring_enter however
// many there are. Only its loop's goroutine uses it.
//
// The layouts below are the kernel's (linux/io_uring.h), fixed by its ABI; ring_test.go checks
// every size and offset against the header's numbers. The mapped memory is the kernel's, not Go's:
// pointers into it are plain addresses the collector never sees, valid until the ring is closed.
type ring struct {
	fd      int
	sqHead  *uint32 // the kernel's: how far it has consumed the submission queue
	sqTail  *uint32 // ours: how far we have filled it, published to the kernel by submit
	sqFlags *uint32 // the kernel's notes to us (ringCQOverflow)
	sqMask  uint32
	sqes    []sqe
	tail    uint32  // the next submission's place, not yet published
	flushed uint32  // the tail as io_uring_enter last saw it
	cqHead  *uint32 // ours: how far we have read the completion queue
	cqTail  *uint32 // the kernel's: how far it has filled it
	cqMask  uint32
	cqes    []cqe
	mem     [2][]byte // the mapped rings, and the mapped submissions

	wait struct { // waitFor's argument to io_uring_enter
		arg getEventsArg
		ts  kernelTimespec
	}
}

// An sqe is one submission queue entry (struct io_uring_sqe): 64 bytes, of which a poll uses
// these.
type sqe struct {
	opcode   uint8
	flags    uint8
	ioprio   uint16
	fd       int32
	off      uint64
	addr     uint64
	len      uint32
	opFlags  uint32 // poll32_events for a poll; msg_flags for a send; other operations' flags
	userData uint64
	bufGroup uint16   // buf_group: the provided buffers a receive picks from (IOSQE_BUFFER_SELECT)
	_        [22]byte // personality, splice_fd_in, addr3 and padding: unused here
}

// A cqe is one completion queue entry (struct io_uring_cqe).
type cqe struct {
	userData uint64
	res      int32 // the result: a count, a poll's events, or a negated errno
	flags    uint32
}

// ringParams is struct io_uring_params, with the offsets of the rings' fields in their mapping.
type ringParams struct {
	sqEntries, cqEntries, flags, sqThreadCPU, sqThreadIdle, features, wqFD uint32
	_                                                                      [3]uint32
	sqOff                                                                  sqRingOffsets
	cqOff                                                                  cqRingOffsets
}

type sqRingOffsets struct {
	head, tail, ringMask, ringEntries, flags, dropped, array, _ uint32
	_                                                           uint64
}

type cqRingOffsets struct {
	head, tail, ringMask, ringEntries, overflow, cqes, flags, _ uint32
	_                                                           uint64
}

// The kernel's numbers this file uses (linux/io_uring.h).
const (
	ringSetupClamp    = 1 << 4 // IORING_SETUP_CLAMP: fewer entries than asked, rather than failing
	ringSetupCoop     = 1 << 8 // IORING_SETUP_COOP_TASKRUN (5.19)
	ringSetupTaskFlag = 1 << 9 // IORING_SETUP_TASKRUN_FLAG: ringTaskRun says when completions wait to be posted
	ringFeatSingleMap = 1 << 0 // IORING_FEAT_SINGLE_MMAP: both rings in one mapping (5.4)
	ringFeatNoDrop    = 1 << 1 // IORING_FEAT_NODROP: completions are never dropped (5.5)
	ringOffSQRing     = 0      // IORING_OFF_SQ_RING
	ringOffSQEs       = 0x10000000
	ringEnterGetEvts  = 1 << 0 // IORING_ENTER_GETEVENTS
	ringEnterExtArg   = 1 << 3 // IORING_ENTER_EXT_ARG: the call's argument is a getEventsArg (5.11)
	ringCQOverflow    = 1 << 1 // IORING_SQ_CQ_OVERFLOW: completions wait in the kernel for room
	ringTaskRun       = 1 << 2 // IORING_SQ_TASKRUN: completions wait for io_uring_enter to post them

	opNop         = 0  // IORING_OP_NOP
	opPollAdd     = 6  // IORING_OP_POLL_ADD
	opPollRemove  = 7  // IORING_OP_POLL_REMOVE
	opSendmsg     = 9  // IORING_OP_SENDMSG
	opAsyncCancel = 14 // IORING_OP_ASYNC_CANCEL
	opSend        = 26 // IORING_OP_SEND
	opRecv        = 27 // IORING_OP_RECV

	sqeBufferSelect = 1 << 5 // IOSQE_BUFFER_SELECT: a receive takes a buffer of its group
	cqeFBuffer      = 1 << 0 // IORING_CQE_F_BUFFER: the completion's flags name the buffer taken
	cqeBufferShift  = 16     // IORING_CQE_BUFFER_SHIFT: where in flags the buffer's id is

	registerPbufRing = 22     // IORING_REGISTER_PBUF_RING (5.19)
	recvPollFirst    = 1 << 0 // IORING_RECVSEND_POLL_FIRST, in a receive's ioprio (5.19)
	cancelAny        = 1 << 2 // IORING_ASYNC_CANCEL_ANY, in a cancellation's flags: every request (5.19)
)

// newRing sets up an io_uring instance with room for entries submissions a turn. Its error says
// why io_uring cannot be used here: disabled by the kernel.io_uring_disabled sysctl or refused
// by a seccomp profile (EPERM), not in this kernel (ENOSYS), short of locked memory (ENOMEM), or
// a kernel too old for what the poller needs.
func newRing(entries uint32) (*ring, error) {
	var p ringParams
	// A poll request completes through work the kernel queues for the thread that armed it. By
	// default the kernel interrupts that thread at once; a loop's goroutine moves between
	// threads, so it is often another one, and the interruptions cost more than the polling
	// (1.8 times epoll's CPU on hello). Cooperatively, the work runs when the thread next enters
	// or leaves the kernel, or is woken if it sleeps; ringTaskRun says when some waits.
	p.flags = ringSetupClamp | ringSetupCoop | ringSetupTaskFlag
	fd, _, e := unix.RawSyscall(unix.SYS_IO_URING_SETUP, uintptr(entries), uintptr(unsafe.Pointer(&p)), 0)
	switch e {
	case 0:
	case unix.EPERM:
		return nil, fmt.Errorf("%w (refused by the kernel.io_uring_disabled sysctl or a seccomp profile)", Error("io_uring_setup", e))
	case unix.ENOSYS:
		return nil, fmt.Errorf("%w (not in this kernel)", Error("io_uring_setup", e))
	case unix.EINVAL:
		return nil, fmt.Errorf("%w (the kernel lacks cooperative task running: Linux 5.19 has it)", Error("io_uring_setup", e))
	case unix.ENOMEM:
		return nil, fmt.Errorf("%w (locked memory: see RLIMIT_MEMLOCK)", Error("io_uring_setup", e))
	default:
		return nil, Error("io_uring_setup", e)
	}
	r := &ring{fd: int(fd)}
	if p.features&(ringFeatSingleMap|ringFeatNoDrop) != ringFeatSingleMap|ringFeatNoDrop {
		r.close()
		return nil, fmt.Errorf("io_uring_setup: the kernel lacks single-mapping rings or completions kept on overflow (features %#x; Linux 5.5 has both)", p.features)
	}
	size := max(p.sqOff.array+4*p.sqEntries, p.cqOff.cqes+uint32(unsafe.Sizeof(cqe{}))*p.cqEntries)
	if err := p.checkOffsets(size); err != nil {
		r.close()
		return nil, err
	}
	rings, err := unix.Mmap(r.fd, ringOffSQRing, int(size), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE)
	if err != nil {
		r.close()
		return nil, Error("mmap", err.(unix.Errno))
	}
	r.mem[0] = rings
	subs, err := unix.Mmap(r.fd, ringOffSQEs, int(p.sqEntries)*int(unsafe.Sizeof(sqe{})), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE)
	if err != nil {
		r.close()
		return nil, Error("mmap", err.(unix.Errno))
	}
	r.mem[1] = subs

	// The rings and the submissions are the kernel's pages, mapped here until unmap: the
	// collector never moves or frees them, and nothing points into them once they are unmapped
	// (unmap forgets every pointer below). checkOffsets has made sure that each field lies
	// inside the mapping, aligned for its type.
	at := func(off uint32) *uint32 { return (*uint32)(unsafe.Pointer(&rings[off])) }
	r.sqHead, r.sqTail, r.sqFlags, r.sqMask = at(p.sqOff.head), at(p.sqOff.tail), at(p.sqOff.flags), *at(p.sqOff.ringMask)
	r.cqHead, r.cqTail, r.cqMask = at(p.cqOff.head), at(p.cqOff.tail), *at(p.cqOff.ringMask)
	r.sqes = unsafe.Slice((*sqe)(unsafe.Pointer(&subs[0])), p.sqEntries)
	r.cqes = unsafe.Slice((*cqe)(unsafe.Pointer(&rings[p.cqOff.cqes])), p.cqEntries)
	// Submission i always sits in slot i: the indirection array maps each slot to itself, once.
	array := unsafe.Slice((*uint32)(unsafe.Pointer(&rings[p.sqOff.array])), p.sqEntries)
	for i := range array {
		array[i] = uint32(i)
	}
	r.tail = *r.sqTail
	r.flushed = r.tail
	return r, nil
}

// next returns the next submission's entry, zeroed: the caller fills it in, and submit hands it
// to the kernel. A full queue is submitted first.
func (r *ring) next() (*sqe, Errno) {
	if r.tail-atomic.LoadUint32(r.sqHead) == uint32(len(r.sqes)) {
		if err := r.submit(0); err != 0 {
			return nil, err
		}
		if r.tail-atomic.LoadUint32(r.sqHead) == uint32(len(r.sqes)) {
			return nil, unix.EBUSY // the kernel took none: its completions want reading first
		}
	}
	s := &r.sqes[r.tail&r.sqMask]
	*s = sqe{}
	r.tail++
	return s, 0
}

// submit hands the kernel what was queued since the last submit, and waits for wait
// completions (0: returns at once). An interrupted call is made again.
func (r *ring) submit(wait uint32) Errno {
	atomic.StoreUint32(r.sqTail, r.tail)
	var flags uintptr
	if wait > 0 || atomic.LoadUint32(r.sqFlags)&(ringCQOverflow|ringTaskRun) != 0 {
		flags = ringEnterGetEvts // also moves completions waiting in the kernel into the queue
	}
	for {
		n := r.tail - r.flushed
		if n == 0 && flags == 0 {
			return 0
		}
		k, _, e := unix.RawSyscall6(unix.SYS_IO_URING_ENTER, uintptr(r.fd), uintptr(n), uintptr(wait), flags, 0, 0)
		switch e {
		case 0:
			r.flushed += uint32(k)
			if uint32(k) == n || k == 0 {
				// All taken; or none, for want of memory: the rest goes with the next call.
				return 0
			}
			// Fewer taken than given: the kernel stopped at a submission it could not start
			// (its completion says why); go on with the rest.
			flags &^= ringEnterGetEvts
			wait = 0
		case unix.EINTR:
		case unix.EBUSY, unix.EAGAIN:
			// Completions wait for room in their queue, or the kernel for memory: the caller
			// reads the completions, and the rest is submitted the next time.
			return 0
		default:
			return e
		}
	}
}

// A getEventsArg is struct io_uring_getevents_arg: what io_uring_enter takes with
// ringEnterExtArg, here a timeout for its wait.
type getEventsArg struct {
	sigmask   uint64
	sigmaskSz uint32
	_         uint32
	ts        uint64 // the address of a kernelTimespec
}

// A kernelTimespec is struct __kernel_timespec: 64-bit fields on every architecture, where
// unix.Timespec's are the C long's size.
type kernelTimespec struct{ sec, nsec int64 }

// waitFor submits what was queued and waits until a completion comes or d has passed, its
// thread blocked in the kernel: for a ring being closed, whose loop has nothing else to do.
func (r *ring) waitFor(d time.Duration) Errno {
	atomic.StoreUint32(r.sqTail, r.tail)
	// The kernel reads the argument, and the timeout whose address it holds as a number, during
	// the call: they are the ring's, in the heap, where they cannot move. On the goroutine's
	// stack they could, when the call grows it, and the number would point at the old place.
	w := &r.wait
	w.ts = kernelTimespec{int64(d / time.Second), int64(d % time.Second)}
	w.arg = getEventsArg{ts: uint64(uintptr(unsafe.Pointer(&w.ts)))}
	k, _, e := unix.Syscall6(unix.SYS_IO_URING_ENTER, uintptr(r.fd), uintptr(r.tail-r.flushed), 1,
		ringEnterGetEvts|ringEnterExtArg, uintptr(unsafe.Pointer(&w.arg)), unsafe.Sizeof(w.arg))
	switch e {
	case 0, unix.ETIME, unix.EINTR, unix.EBUSY, unix.EAGAIN:
		r.flushed += uint32(k)
		return 0
	}
	return e
}

// ready returns how many completions wait to be read: cqe(0) is the oldest.
func (r *ring) ready() uint32 { return atomic.LoadUint32(r.cqTail) - *r.cqHead }

// cqe returns the i-th completion waiting to be read.
func (r *ring) cqe(i uint32) *cqe { return &r.cqes[(*r.cqHead+i)&r.cqMask] }

// consume frees the slots of the n oldest completions, once they are read.
func (r *ring) consume(n uint32) { atomic.StoreUint32(r.cqHead, *r.cqHead+n) }

// register makes the io_uring_register(2) call op with arg, a structure of the kernel's layout
// that the caller keeps alive through the call.
func (r *ring) register(op uint32, arg unsafe.Pointer, n uint32) Errno {
	_, _, e := unix.RawSyscall6(unix.SYS_IO_URING_REGISTER, uintptr(r.fd), uintptr(op), uintptr(arg), uintptr(n), 0, 0)
	return e
}

// close unmaps the rings and closes the instance, which ends every request still under way.
func (r *ring) close() {
	r.unmap()
	unix.Close(r.fd)
}

// unmap unmaps the rings, for a ring whose descriptor is closed by another (its Poller's file),
// and forgets every pointer into them: a use after it fails on a nil pointer, not on memory the
// system may have given to something else.
func (r *ring) unmap() {
	r.sqHead, r.sqTail, r.sqFlags, r.cqHead, r.cqTail = nil, nil, nil, nil, nil
	r.sqes, r.cqes = nil, nil
	for i, m := range r.mem {
		if m != nil {
			unix.Munmap(m)
			r.mem[i] = nil
		}
	}
}

// checkOffsets reports an error unless each of the rings' fields that the kernel placed (the
// queues' heads, tails, masks and flags, the indirection array, the completions) lies within a
// mapping of size bytes and is aligned for its type: what newRing's pointers assume.
func (p *ringParams) checkOffsets(size uint32) error {
	for _, f := range []struct {
		off, n, align uint32
	}{
		{p.sqOff.head, 4, 4}, {p.sqOff.tail, 4, 4}, {p.sqOff.ringMask, 4, 4}, {p.sqOff.flags, 4, 4},
		{p.sqOff.array, 4 * p.sqEntries, 4},
		{p.cqOff.head, 4, 4}, {p.cqOff.tail, 4, 4}, {p.cqOff.ringMask, 4, 4},
		{p.cqOff.cqes, uint32(unsafe.Sizeof(cqe{})) * p.cqEntries, uint32(unsafe.Alignof(cqe{}))},
	} {
		if f.off%f.align != 0 || uint64(f.off)+uint64(f.n) > uint64(size) {
			return fmt.Errorf("io_uring_setup: a ring field at offset %d (%d bytes) lies outside the %d-byte mapping or off its %d-byte alignment", f.off, f.n, size, f.align)
		}
	}
	return nil
}
