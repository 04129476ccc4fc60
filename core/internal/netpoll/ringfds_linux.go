//go:build linux && !dwell_portable

package netpoll

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// A ringPoll's entries by descriptor live in memory mapped for them, not in the Go heap: they hold
// no pointer, a table for every descriptor a loop may have is large and mostly untouched, and a
// mapping's pages cost memory only once written, where a heap slice large enough would weigh on
// the collector's pacing and, growing, be copied whole. The table starts with room for
// fdTableStart descriptors and doubles as larger ones come.
const fdTableStart = 1 << 16

// mapFDs returns a table of n entries, zeroed, holding old's first used entries.
func mapFDs(old []ringFD, used, n int) ([]ringFD, error) {
	mem, err := unix.Mmap(-1, 0, n*int(unsafe.Sizeof(ringFD{})), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_NORESERVE)
	if err != nil {
		return nil, Error("mmap", err.(unix.Errno))
	}
	// The mapping is page-aligned, as ringFD wants; the slice made over it is the only way to it,
	// and unmapFDs forgets it.
	fds := unsafe.Slice((*ringFD)(unsafe.Pointer(&mem[0])), n)
	copy(fds, old[:used])
	if old != nil {
		unmapFDs(old)
	}
	return fds, nil
}

// unmapFDs releases a table of mapFDs'.
func unmapFDs(fds []ringFD) {
	if len(fds) > 0 {
		unix.Munmap(unsafe.Slice((*byte)(unsafe.Pointer(&fds[0])), len(fds)*int(unsafe.Sizeof(ringFD{}))))
	}
}
