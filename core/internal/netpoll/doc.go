// Package netpoll is what dwell's loops need of the operating system: a readiness poller,
// non-blocking sockets, a wake-up descriptor other goroutines can signal, and file sends.
//
// On Linux it is epoll (or, made by NewRingPoller, an io_uring instance that watches the same
// way, ringpoll_linux.go, and reads and writes itself the sockets it owns, ringio_linux.go), eventfd and the socket system calls themselves, made through
// RawSyscall where they cannot block. On every other system, and on Linux with the build tag
// dwell_portable, it is a portable implementation on Go's own net package and runtime poller,
// behind the same functions: a descriptor is then a number this package hands out, and each
// socket has a goroutine reading into a buffer and one writing from another, so that the loop
// sees the same non-blocking, level-triggered behaviour. It is correct first; it is not fast.
//
// The loop owns its poller; only Wakeup.Signal may be called from other goroutines.
package netpoll

// An Interest is what a descriptor is watched for, in a byte.
type Interest uint8

const (
	WatchRead   Interest = 1 << iota // the descriptor has bytes to read (or an end)
	WatchWrite                       // the descriptor has room to write
	WatchHangup                      // the peer shut down its side (EPOLLRDHUP)
)
