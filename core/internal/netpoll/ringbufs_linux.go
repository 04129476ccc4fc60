//go:build linux && !dwell_portable

package netpoll

import (
	"fmt"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// A bufRing is the buffers a ring's receives land in (IORING_REGISTER_PBUF_RING): a receive
// under way holds no buffer, and takes one of these only when bytes arrive, so that a
// connection waiting for its client holds none, as under epoll. The kernel takes them from the
// ring's head in order; the loop gives each back (give) once what it holds has been read.
//
// Both the ring of descriptors and the buffers are mapped memory, not Go's: the kernel writes
// into them at any time, and the collector never sees or moves them.
type bufRing struct {
	descs []bufDesc // the ring the kernel takes buffers from: ringBufs of them
	bufs  []byte    // the buffers, bufSize bytes each, buffer i at i*bufSize
	tail  uint16    // where the next buffer given back goes
	mem   [2][]byte // the mappings of descs and bufs
}

// A bufDesc is struct io_uring_buf: one buffer the kernel may take. The ring's tail, which the
// loop moves, lies in the first one's resv field (struct io_uring_buf_ring).
type bufDesc struct {
	addr uint64
	len  uint32
	bid  uint16
	resv uint16
}

// bufReg is struct io_uring_buf_reg, what registers a buffer ring.
type bufReg struct {
	ringAddr    uint64
	ringEntries uint32
	bgid        uint16
	flags       uint16
	_           [3]uint64
}

const (
	// ringBufs is the buffers of a loop's ring, and bufSize the size of each: what one receive
	// takes at most. A turn's receives beyond ringBufs wait for the next turn (ENOBUFS), when
	// the loop has read and given back this turn's.
	ringBufs = 128
	bufSize  = 16 << 10
	bufGroup = 0 // the group id of the ring: a loop has one
)

// newBufRing maps the buffers and registers them with r, all given to the kernel.
func newBufRing(r *ring) (*bufRing, error) {
	b := &bufRing{}
	descs, err := unix.Mmap(-1, 0, ringBufs*int(unsafe.Sizeof(bufDesc{})), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return nil, Error("mmap", err.(unix.Errno))
	}
	b.mem[0] = descs
	bufs, err := unix.Mmap(-1, 0, ringBufs*bufSize, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		b.unmap()
		return nil, Error("mmap", err.(unix.Errno))
	}
	b.mem[1] = bufs
	// Mapped pages are page-aligned, as the kernel wants the ring, and aligned for bufDesc.
	b.descs = unsafe.Slice((*bufDesc)(unsafe.Pointer(&descs[0])), ringBufs)
	b.bufs = bufs
	reg := bufReg{ringAddr: uint64(uintptr(unsafe.Pointer(&descs[0]))), ringEntries: ringBufs, bgid: bufGroup}
	if e := r.register(registerPbufRing, unsafe.Pointer(&reg), 1); e != 0 {
		b.unmap()
		return nil, fmt.Errorf("%w (registering the receive buffers)", Error("io_uring_register", e))
	}
	for i := range uint16(ringBufs) {
		b.give(i)
	}
	return b, nil
}

// buf returns buffer id's bytes.
func (b *bufRing) buf(id uint16) []byte {
	return b.bufs[int(id)*bufSize : (int(id)+1)*bufSize : (int(id)+1)*bufSize]
}

// give hands buffer id back to the kernel, at the ring's tail.
func (b *bufRing) give(id uint16) {
	d := &b.descs[b.tail&(ringBufs-1)]
	d.addr = uint64(uintptr(unsafe.Pointer(&b.bufs[int(id)*bufSize])))
	d.len = bufSize
	d.bid = id
	b.tail++
	// The tail is published with a release store, after the descriptor: the kernel reads the
	// descriptor once it sees the tail past it. Go has no 16-bit atomic store, so the tail goes
	// with the 16 bits beside it, the first descriptor's bid, which only the loop writes:
	// storing the value it already has changes nothing for a kernel reading it.
	word := (*uint32)(unsafe.Pointer(&b.descs[0].bid))
	bid0 := uint32(b.descs[0].bid)
	if bigEndian {
		atomic.StoreUint32(word, bid0<<16|uint32(b.tail))
	} else {
		atomic.StoreUint32(word, uint32(b.tail)<<16|bid0)
	}
}

// unmap releases the mappings; the ring's close has unregistered them.
func (b *bufRing) unmap() {
	b.descs, b.bufs = nil, nil
	for i, m := range b.mem {
		if m != nil {
			unix.Munmap(m)
			b.mem[i] = nil
		}
	}
}
