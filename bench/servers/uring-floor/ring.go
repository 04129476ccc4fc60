package main

import (
	"fmt"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The kernel's numbers (linux/io_uring.h).
const (
	setupCoopTaskrun = 1 << 8 // IORING_SETUP_COOP_TASKRUN
	featSingleMmap   = 1 << 0 // IORING_FEAT_SINGLE_MMAP
	enterGetEvents   = 1 << 0 // IORING_ENTER_GETEVENTS
	offSQEs          = 0x10000000

	opAccept = 13 // IORING_OP_ACCEPT
	opSend   = 26 // IORING_OP_SEND
	opRecv   = 27 // IORING_OP_RECV

	acceptMultishot = 1 << 0 // IORING_ACCEPT_MULTISHOT, in ioprio
	recvMultishot   = 1 << 1 // IORING_RECV_MULTISHOT, in ioprio
	sqeBufferSelect = 1 << 5 // IOSQE_BUFFER_SELECT
	cqeFBuffer      = 1 << 0 // IORING_CQE_F_BUFFER
	cqeFMore        = 1 << 1 // IORING_CQE_F_MORE
	registerPbuf    = 22     // IORING_REGISTER_PBUF_RING
)

// params is struct io_uring_params.
type params struct {
	sqEntries, cqEntries, flags, sqThreadCPU, sqThreadIdle, features, wqFD uint32
	_                                                                      [3]uint32
	sq                                                                     [10]uint32 // io_sqring_offsets
	cq                                                                     [10]uint32 // io_cqring_offsets
}

// sqe is struct io_uring_sqe; cqe is struct io_uring_cqe.
type sqe struct {
	opcode, flags uint8
	ioprio        uint16
	fd            int32
	off, addr     uint64
	len, opFlags  uint32
	userData      uint64
	bufGroup      uint16
	_             uint16
	_             int32
	_             [2]uint64
}

type cqe struct {
	userData uint64
	res      int32
	flags    uint32
}

// ring is one io_uring instance, used by one goroutine.
type ring struct {
	fd                     int
	sqTail, sqHead, cqHead *uint32
	cqTail                 *uint32
	sqMask, cqMask         uint32
	sqes                   []sqe
	cqes                   []cqe
	tail, submitted        uint32
}

func newRing(entries uint32) (*ring, error) {
	// The completions' work runs when the thread that submitted leaves the kernel, rather than
	// interrupting it at once (IORING_SETUP_COOP_TASKRUN, Linux 5.19). The stricter
	// SINGLE_ISSUER with DEFER_TASKRUN needs the loop locked to its thread, waiting in
	// io_uring_enter: it measured more CPU per request here than parking in Go's poller, for
	// the handing over of the processor that a blocking call costs (three to five times the
	// context switches).
	p := params{flags: setupCoopTaskrun}
	fd, _, e := unix.RawSyscall(unix.SYS_IO_URING_SETUP, uintptr(entries), uintptr(unsafe.Pointer(&p)), 0)
	if e != 0 {
		return nil, fmt.Errorf("io_uring_setup: %w", e)
	}
	if p.features&featSingleMmap == 0 {
		return nil, fmt.Errorf("io_uring_setup: no single mapping (Linux 5.4 has it)")
	}
	// io_sqring_offsets: head, tail, ring_mask, ring_entries, flags, dropped, array;
	// io_cqring_offsets: head, tail, ring_mask, ring_entries, overflow, cqes.
	size := max(p.sq[6]+4*p.sqEntries, p.cq[5]+uint32(unsafe.Sizeof(cqe{}))*p.cqEntries)
	mem, err := unix.Mmap(int(fd), 0, int(size), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE)
	if err != nil {
		return nil, fmt.Errorf("mmap: %w", err)
	}
	subs, err := unix.Mmap(int(fd), offSQEs, int(p.sqEntries)*int(unsafe.Sizeof(sqe{})), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE)
	if err != nil {
		return nil, fmt.Errorf("mmap: %w", err)
	}
	// The mappings live as long as the process: the pointers below never outlive them.
	at := func(off uint32) *uint32 { return (*uint32)(unsafe.Pointer(&mem[off])) }
	r := &ring{fd: int(fd), sqHead: at(p.sq[0]), sqTail: at(p.sq[1]), sqMask: *at(p.sq[2]),
		cqHead: at(p.cq[0]), cqTail: at(p.cq[1]), cqMask: *at(p.cq[2])}
	r.sqes = unsafe.Slice((*sqe)(unsafe.Pointer(&subs[0])), p.sqEntries)
	r.cqes = unsafe.Slice((*cqe)(unsafe.Pointer(&mem[p.cq[5]])), p.cqEntries)
	array := unsafe.Slice((*uint32)(unsafe.Pointer(&mem[p.sq[6]])), p.sqEntries)
	for i := range array {
		array[i] = uint32(i)
	}
	r.tail = *r.sqTail
	r.submitted = r.tail
	return r, nil
}

// get returns the next submission, zeroed; a full queue is submitted first.
func (r *ring) get() *sqe {
	if r.tail-atomic.LoadUint32(r.sqHead) == uint32(len(r.sqes)) {
		r.enter()
	}
	s := &r.sqes[r.tail&r.sqMask]
	*s = sqe{}
	r.tail++
	return s
}

// enter submits what was queued and posts the completions whose work is pending, without
// waiting.
func (r *ring) enter() {
	atomic.StoreUint32(r.sqTail, r.tail)
	for {
		n := r.tail - r.submitted
		k, _, e := unix.RawSyscall6(unix.SYS_IO_URING_ENTER, uintptr(r.fd), uintptr(n), 0, enterGetEvents, 0, 0)
		switch e {
		case 0:
			r.submitted += uint32(k)
			return
		case unix.EINTR:
			continue
		case unix.EBUSY, unix.EAGAIN:
			return
		default:
			panic(fmt.Sprintf("io_uring_enter: %v", e))
		}
	}
}

// ready reports whether completions wait to be read.
func (r *ring) ready() bool { return *r.cqHead != atomic.LoadUint32(r.cqTail) }

// completions calls f with each completion waiting, then frees their slots.
func (r *ring) completions(f func(c cqe)) {
	head, tail := *r.cqHead, atomic.LoadUint32(r.cqTail)
	for ; head != tail; head++ {
		f(r.cqes[head&r.cqMask])
	}
	atomic.StoreUint32(r.cqHead, head)
}

// bufRing is a provided buffer ring of n buffers of size bytes (IORING_REGISTER_PBUF_RING):
// a multishot receive takes one as bytes arrive, and give hands it back.
type bufRing struct {
	descs []bufDesc
	mem   []byte
	size  int
	tail  uint16
}

// bufDesc is struct io_uring_buf; the ring's tail is the first descriptor's resv field.
type bufDesc struct {
	addr uint64
	len  uint32
	bid  uint16
	resv uint16
}

func newBufRing(r *ring, group uint16, n, size int) (*bufRing, error) {
	descs, err := unix.Mmap(-1, 0, n*16, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return nil, err
	}
	mem, err := unix.Mmap(-1, 0, n*size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return nil, err
	}
	b := &bufRing{descs: unsafe.Slice((*bufDesc)(unsafe.Pointer(&descs[0])), n), mem: mem, size: size}
	reg := struct {
		addr    uint64
		entries uint32
		group   uint16
		flags   uint16
		_       [3]uint64
	}{addr: uint64(uintptr(unsafe.Pointer(&descs[0]))), entries: uint32(n), group: group}
	if _, _, e := unix.RawSyscall6(unix.SYS_IO_URING_REGISTER, uintptr(r.fd), registerPbuf, uintptr(unsafe.Pointer(&reg)), 1, 0, 0); e != 0 {
		return nil, fmt.Errorf("IORING_REGISTER_PBUF_RING: %w", e)
	}
	for i := range n {
		b.give(uint16(i))
	}
	return b, nil
}

// buf returns buffer id's first n bytes.
func (b *bufRing) buf(id uint16, n int) []byte {
	return b.mem[int(id)*b.size : int(id)*b.size+n]
}

// give hands buffer id back to the kernel.
func (b *bufRing) give(id uint16) {
	d := &b.descs[int(b.tail)&(len(b.descs)-1)]
	d.addr = uint64(uintptr(unsafe.Pointer(&b.mem[int(id)*b.size])))
	d.len = uint32(b.size)
	d.bid = id
	b.tail++
	// The tail is a 16-bit field the kernel reads; the store is ordered after the descriptor's
	// by the atomic on the 32-bit word holding it (little-endian: the upper half).
	w := (*uint32)(unsafe.Pointer(&b.descs[0].bid))
	atomic.StoreUint32(w, uint32(b.descs[0].bid)|uint32(b.tail)<<16)
}
