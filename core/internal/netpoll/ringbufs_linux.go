//go:build linux && !dwell_portable

package netpoll

import (
	"fmt"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// recvBufs are the buffers a ring's receives land in: a receive under way holds no buffer, and
// takes one only when bytes arrive, so that a connection waiting for its client holds none, as
// under epoll. They come in two groups, each a ring of its own (bufRing): small buffers for the
// receives of a loop that reads little at a time (HTTP/1.1's request heads), large ones for the
// rest, so that the memory a busy loop touches is mostly the small ones'. A buffer's id, which a
// completion names, tells its group: the large ones' ids follow the small ones'.
type recvBufs struct{ small, large *bufRing }

const (
	smallBufs, smallSize = 128, 512     // 64 KiB
	largeBufs, largeSize = 64, 16 << 10 // 1 MiB, touched as large receives come
	maxRecv              = largeSize    // the most one receive takes
)

// newRecvBufs maps both groups and registers them with r.
func newRecvBufs(r *ring) (*recvBufs, error) {
	small, err := newBufRing(r, 0, smallBufs, smallSize, 0)
	if err != nil {
		return nil, err
	}
	large, err := newBufRing(r, 1, largeBufs, largeSize, smallBufs)
	if err != nil {
		small.unmap() // the ring's close unregisters it
		return nil, err
	}
	return &recvBufs{small: small, large: large}, nil
}

// group returns the group a receive of up to n bytes takes its buffer from.
func (rb *recvBufs) group(n int) *bufRing {
	if n <= smallSize {
		return rb.small
	}
	return rb.large
}

// of returns the group of buffer id.
func (rb *recvBufs) of(id uint16) *bufRing {
	if id < smallBufs {
		return rb.small
	}
	return rb.large
}

// buf returns buffer id's bytes.
func (rb *recvBufs) buf(id uint16) []byte { return rb.of(id).buf(id) }

// give hands buffer id back to the kernel.
func (rb *recvBufs) give(id uint16) { rb.of(id).give(id) }

func (rb *recvBufs) unmap() {
	rb.small.unmap()
	rb.large.unmap()
}

// A bufRing is one group of receive buffers (IORING_REGISTER_PBUF_RING): the kernel takes them
// from the ring's head in order; the loop gives each back (give) once what it holds has been
// read.
//
// Both the ring of descriptors and the buffers are mapped memory, not Go's: the kernel writes
// into them at any time, and the collector never sees or moves them.
type bufRing struct {
	descs []bufDesc // the ring the kernel takes buffers from
	bufs  []byte    // the buffers, size bytes each, buffer first+i at i*size
	size  int
	first uint16    // the id of the first buffer
	gid   uint16    // the group's id, which a receive names
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

// newBufRing maps n buffers of size bytes, ids from first, and registers them with r as group
// gid, all given to the kernel. n is a power of two.
func newBufRing(r *ring, gid uint16, n, size int, first uint16) (*bufRing, error) {
	b := &bufRing{size: size, first: first, gid: gid}
	descs, err := unix.Mmap(-1, 0, n*int(unsafe.Sizeof(bufDesc{})), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return nil, Error("mmap", err.(unix.Errno))
	}
	b.mem[0] = descs
	bufs, err := unix.Mmap(-1, 0, n*size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		b.unmap()
		return nil, Error("mmap", err.(unix.Errno))
	}
	b.mem[1] = bufs
	// Mapped pages are page-aligned, as the kernel wants the ring, and aligned for bufDesc.
	b.descs = unsafe.Slice((*bufDesc)(unsafe.Pointer(&descs[0])), n)
	b.bufs = bufs
	reg := bufReg{ringAddr: uint64(uintptr(unsafe.Pointer(&descs[0]))), ringEntries: uint32(n), bgid: gid}
	if e := r.register(registerPbufRing, unsafe.Pointer(&reg), 1); e != 0 {
		b.unmap()
		return nil, fmt.Errorf("%w (registering the receive buffers)", Error("io_uring_register", e))
	}
	for i := range n {
		b.give(first + uint16(i))
	}
	return b, nil
}

// buf returns buffer id's bytes.
func (b *bufRing) buf(id uint16) []byte {
	at := int(id-b.first) * b.size
	return b.bufs[at : at+b.size : at+b.size]
}

// give hands buffer id back to the kernel, at the ring's tail.
func (b *bufRing) give(id uint16) {
	d := &b.descs[int(b.tail)&(len(b.descs)-1)]
	d.addr = uint64(uintptr(unsafe.Pointer(&b.bufs[int(id-b.first)*b.size])))
	d.len = uint32(b.size)
	d.bid = id
	b.tail++
	// The tail is published with a release store, after the descriptor: the kernel reads the
	// descriptor once it sees the tail past it. Go has no 16-bit atomic store, so the tail goes
	// with the 16 bits beside it, the first descriptor's bid, which only the loop writes:
	// storing the value it already has changes nothing for a kernel reading it. The two lie at
	// offsets 12 and 14 of a page-aligned mapping, so the word is aligned (TestRingLayout).
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
