//go:build linux && !dwell_portable

package netpoll

import (
	"testing"
	"unsafe"
)

// TestRingLayout: the structures shared with the kernel have the sizes and offsets of
// linux/io_uring.h (read off the header with offsetof).
func TestRingLayout(t *testing.T) {
	var s sqe
	var c cqe
	var p ringParams
	var d bufDesc
	var g bufReg
	var a getEventsArg
	for _, f := range []struct {
		name      string
		got, want uintptr
	}{
		{"sizeof(struct io_uring_sqe)", unsafe.Sizeof(s), 64},
		{"sqe.opcode", unsafe.Offsetof(s.opcode), 0},
		{"sqe.flags", unsafe.Offsetof(s.flags), 1},
		{"sqe.ioprio", unsafe.Offsetof(s.ioprio), 2},
		{"sqe.fd", unsafe.Offsetof(s.fd), 4},
		{"sqe.off", unsafe.Offsetof(s.off), 8},
		{"sqe.addr", unsafe.Offsetof(s.addr), 16},
		{"sqe.len", unsafe.Offsetof(s.len), 24},
		{"sqe.poll32_events", unsafe.Offsetof(s.opFlags), 28},
		{"sqe.user_data", unsafe.Offsetof(s.userData), 32},
		{"sqe.buf_group", unsafe.Offsetof(s.bufGroup), 40},
		{"sizeof(struct io_uring_buf)", unsafe.Sizeof(d), 16},
		{"io_uring_buf.addr", unsafe.Offsetof(d.addr), 0},
		{"io_uring_buf.len", unsafe.Offsetof(d.len), 8},
		{"io_uring_buf.bid", unsafe.Offsetof(d.bid), 12},
		{"io_uring_buf_ring.tail (the first io_uring_buf's resv)", unsafe.Offsetof(d.resv), 14},
		{"sizeof(struct io_uring_buf_reg)", unsafe.Sizeof(g), 40},
		{"io_uring_buf_reg.ring_addr", unsafe.Offsetof(g.ringAddr), 0},
		{"io_uring_buf_reg.ring_entries", unsafe.Offsetof(g.ringEntries), 8},
		{"io_uring_buf_reg.bgid", unsafe.Offsetof(g.bgid), 12},
		{"io_uring_buf_reg.flags", unsafe.Offsetof(g.flags), 14},
		{"sizeof(struct io_uring_cqe)", unsafe.Sizeof(c), 16},
		{"cqe.user_data", unsafe.Offsetof(c.userData), 0},
		{"cqe.res", unsafe.Offsetof(c.res), 8},
		{"cqe.flags", unsafe.Offsetof(c.flags), 12},
		{"sizeof(struct io_uring_getevents_arg)", unsafe.Sizeof(a), 24},
		{"io_uring_getevents_arg.sigmask_sz", unsafe.Offsetof(a.sigmaskSz), 8},
		{"io_uring_getevents_arg.ts", unsafe.Offsetof(a.ts), 16},
		{"sizeof(struct __kernel_timespec)", unsafe.Sizeof(kernelTimespec{}), 16},
		{"sizeof(struct io_uring_params)", unsafe.Sizeof(p), 120},
		{"params.features", unsafe.Offsetof(p.features), 20},
		{"params.sq_off", unsafe.Offsetof(p.sqOff), 40},
		{"params.cq_off", unsafe.Offsetof(p.cqOff), 80},
		{"sizeof(struct io_sqring_offsets)", unsafe.Sizeof(p.sqOff), 40},
		{"sq_off.array", unsafe.Offsetof(p.sqOff.array), 24},
		{"sizeof(struct io_cqring_offsets)", unsafe.Sizeof(p.cqOff), 40},
		{"cq_off.cqes", unsafe.Offsetof(p.cqOff.cqes), 20},
	} {
		if f.got != f.want {
			t.Errorf("%s is %d, not %d", f.name, f.got, f.want)
		}
	}
	if x := poll32(0x2001); bigEndian && x != 0x20010000 || !bigEndian && x != 0x2001 {
		t.Errorf("poll32(0x2001) = %#x on a big-endian machine: %v", x, bigEndian)
	}
}

// TestRingOffsets: a field the kernel placed past the mapping's end, or off its alignment, is
// refused before any pointer is made from it; a real ring's are all accepted (newTestRing).
func TestRingOffsets(t *testing.T) {
	var p ringParams
	p.sqEntries, p.cqEntries = 8, 16
	p.sqOff = sqRingOffsets{head: 0, tail: 64, ringMask: 256, flags: 276, array: 512}
	p.cqOff = cqRingOffsets{head: 128, tail: 192, ringMask: 260, cqes: 320}
	if err := p.checkOffsets(600); err != nil {
		t.Fatalf("well-placed fields refused: %v", err)
	}
	if err := p.checkOffsets(540); err == nil {
		t.Error("an indirection array past the mapping's end accepted")
	}
	p.cqOff.cqes = 324
	if err := p.checkOffsets(600); err == nil {
		t.Error("completions off their 8-byte alignment accepted")
	}
}

// TestRingNop: a submission reaches the kernel and its completion comes back with its data, in
// order, past the end of the queues (their indexes wrap).
func TestRingNop(t *testing.T) {
	r := newTestRing(t)
	defer r.close()
	for round := range 3 * len(r.sqes) / 4 {
		for i := range 4 {
			s, err := r.next()
			if err != 0 {
				t.Fatal(err)
			}
			s.opcode = opNop
			s.userData = uint64(round*4 + i)
		}
		if err := r.submit(4); err != 0 {
			t.Fatal(err)
		}
		if n := r.ready(); n != 4 {
			t.Fatalf("round %d: %d completions, not 4", round, n)
		}
		for i := range uint32(4) {
			if c := r.cqe(i); c.userData != uint64(round*4)+uint64(i) || c.res != 0 {
				t.Fatalf("round %d: completion %d is %+v", round, i, *c)
			}
		}
		r.consume(4)
	}
}

// TestRingFull: submissions queued past the queue's size go to the kernel as the queue fills,
// and every one completes.
func TestRingFull(t *testing.T) {
	r := newTestRing(t)
	defer r.close()
	n := len(r.sqes) + 2
	for i := range n {
		s, err := r.next()
		if err != 0 {
			t.Fatal(err)
		}
		s.opcode = opNop
		s.userData = uint64(i)
	}
	if err := r.submit(0); err != 0 {
		t.Fatal(err)
	}
	if got := r.ready(); got != uint32(n) {
		t.Fatalf("%d completions of %d submissions", got, n)
	}
	for i := range uint32(n) {
		if c := r.cqe(i); c.userData != uint64(i) {
			t.Fatalf("completion %d is of submission %d", i, c.userData)
		}
	}
	r.consume(uint32(n))
}

// newTestRing returns a small ring, or skips the test where io_uring cannot be used.
func newTestRing(t *testing.T) *ring {
	t.Helper()
	r, err := newRing(8)
	if err != nil {
		t.Skipf("io_uring cannot be used here: %v", err)
	}
	return r
}
