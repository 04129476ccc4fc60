package gid

import "runtime"

// Number returns the calling goroutine's number, as stack traces show it ("goroutine 18
// [running]:"): exact on every architecture, and slow (a traceback of the caller), so it is
// for what is done once per goroutine, or in the race build.
func Number() uint64 {
	var buf [64]byte
	b := buf[:runtime.Stack(buf[:], false)]
	var n uint64
	for _, ch := range b[len("goroutine "):] {
		if ch < '0' || ch > '9' {
			break
		}
		n = n*10 + uint64(ch-'0')
	}
	return n
}
