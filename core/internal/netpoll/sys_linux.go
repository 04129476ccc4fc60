//go:build linux && !dwell_portable

package netpoll

import (
	"net/netip"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The loop's sockets are non-blocking, so these calls return at once; they go through
// RawSyscall to skip the scheduler hand-off that a possibly-blocking syscall pays for. The calls
// that read a file (pread, sendfile) can block on the disk when the page cache is cold: those
// take the ordinary path, which lets the runtime give the loop's processor to other goroutines
// meanwhile. Each returns the errno itself so the hot path never boxes an error.
//
// Pointers handed to the kernel become uintptr inside the call expression itself, the one form
// in which unsafe.Pointer's rules keep what they point to alive and in place for the call. An
// iovec's Base is a real pointer, so the buffers an IOVecs names stay alive while it holds them.

// An Errno is a system call's error number; 0 means success.
type Errno = unix.Errno

// The error numbers the loop acts on.
const (
	EAGAIN       = unix.EAGAIN
	EINTR        = unix.EINTR
	ECONNABORTED = unix.ECONNABORTED
	EMFILE       = unix.EMFILE
	ENFILE       = unix.ENFILE
	ENOBUFS      = unix.ENOBUFS
	ENOMEM       = unix.ENOMEM
	EIO          = unix.EIO
	ECONNRESET   = unix.ECONNRESET
	EPIPE        = unix.EPIPE
)

// Read reads from a socket into p; 0 bytes and no error means the peer's end of input.
func Read(fd int, p []byte) (int, Errno) {
	if len(p) == 0 {
		return 0, 0
	}
	r, _, e := unix.RawSyscall(unix.SYS_READ, uintptr(fd), uintptr(unsafe.Pointer(unsafe.SliceData(p))), uintptr(len(p)))
	return int(r), e
}

// Write writes p to a socket.
func Write(fd int, p []byte) (int, Errno) {
	if len(p) == 0 {
		return 0, 0
	}
	r, _, e := unix.RawSyscall(unix.SYS_WRITE, uintptr(fd), uintptr(unsafe.Pointer(unsafe.SliceData(p))), uintptr(len(p)))
	return int(r), e
}

// IOVecs gathers buffers for one vectored write. A loop keeps one and reuses it.
type IOVecs struct{ v []unix.Iovec }

// NewIOVecs returns an IOVecs with room for n buffers.
func NewIOVecs(n int) *IOVecs { return &IOVecs{v: make([]unix.Iovec, 0, n)} }

// Append adds b to the write.
func (v *IOVecs) Append(b []byte) {
	iov := unix.Iovec{Base: unsafe.SliceData(b)}
	iov.SetLen(len(b))
	v.v = append(v.v, iov)
}

// Len returns the number of buffers gathered.
func (v *IOVecs) Len() int { return len(v.v) }

// At returns the i'th buffer gathered: the slice Append was given (its capacity cut to its
// length), rebuilt from the iovec's base and length. It is valid as long as that buffer is,
// which the caller keeps until Reset; Base is a *byte the collector sees, so the buffer stays
// alive while it is gathered, and Len is the length SetLen stored, whatever its integer type.
func (v *IOVecs) At(i int) []byte { return unsafe.Slice(v.v[i].Base, v.v[i].Len) }

// Reset empties v, dropping its references to the buffers.
func (v *IOVecs) Reset() {
	clear(v.v)
	v.v = v.v[:0]
}

// Writev writes the gathered buffers, in order; one buffer goes out with a plain write.
func Writev(fd int, v *IOVecs) (int, Errno) {
	if len(v.v) == 1 {
		return Write(fd, unsafe.Slice(v.v[0].Base, v.v[0].Len))
	}
	r, _, e := unix.RawSyscall(unix.SYS_WRITEV, uintptr(fd), uintptr(unsafe.Pointer(unsafe.SliceData(v.v))), uintptr(len(v.v)))
	return int(r), e
}

// WritevMore is Writev with MSG_MORE: the kernel holds the bytes back, as TCP_CORK would, until
// a following send without the flag, so that a response head and the file Sendfile sends behind
// it leave in the same segments instead of the head in a packet of its own.
func WritevMore(fd int, v *IOVecs) (int, Errno) {
	msg := unix.Msghdr{Iov: unsafe.SliceData(v.v)}
	msg.SetIovlen(len(v.v))
	r, _, e := unix.RawSyscall(unix.SYS_SENDMSG, uintptr(fd), uintptr(unsafe.Pointer(&msg)), unix.MSG_MORE|unix.MSG_NOSIGNAL)
	return int(r), e
}

// A File is a file opened for sending (FileOf): its descriptor.
type File int32

// FileOf returns the File to send f's bytes with. f must stay open until the sends are done.
func FileOf(f *os.File) (File, error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return -1, err
	}
	fd := -1
	// Control rather than f.Fd, which would switch the file to blocking mode.
	if err := rc.Control(func(s uintptr) { fd = int(s) }); err != nil {
		return -1, err
	}
	return File(fd), nil
}

// Sendfile sends up to n bytes of f from *off to a socket, advancing *off.
func Sendfile(sock int, f File, off *int64, n int) (int, Errno) {
	r, _, e := unix.Syscall6(unix.SYS_SENDFILE, uintptr(sock), uintptr(f), uintptr(unsafe.Pointer(off)), uintptr(n), 0, 0)
	return int(r), e
}

// Pread reads f at off into p: from the page cache, as Sendfile does, so it returns at once
// unless the disk has to be read.
func Pread(f File, p []byte, off int64) (int, Errno) {
	r, _, e := unix.Syscall6(unix.SYS_PREAD64, uintptr(f), uintptr(unsafe.Pointer(unsafe.SliceData(p))), uintptr(len(p)), uintptr(off), 0, 0)
	return int(r), e
}

// Close closes a socket. Without SO_LINGER, close(2) on a socket returns at once: the kernel
// sends what is left and the FIN on its own.
func Close(fd int) {
	unix.RawSyscall(unix.SYS_CLOSE, uintptr(fd), 0, 0)
}

// CloseListener stops a listening socket and closes it. The shutdown ends the listening at once,
// resetting the connections queued on it as a close does, whatever else still holds the socket
// open: an io_uring poll request, which the kernel may free a moment after its removal.
func CloseListener(fd int) {
	unix.Shutdown(fd, unix.SHUT_RD)
	Close(fd)
}

// ShutdownWrite ends the socket's output: the peer reads the end of input once it has the rest.
func ShutdownWrite(fd int) { unix.Shutdown(fd, unix.SHUT_WR) }

// ResetOnClose makes the next Close reset the connection (SO_LINGER with a zero timeout)
// instead of ending it with a FIN: for a response that must not look complete.
func ResetOnClose(fd int) {
	unix.SetsockoptLinger(fd, unix.SOL_SOCKET, unix.SO_LINGER, &unix.Linger{Onoff: 1, Linger: 0})
}

// Accept accepts a connection, non-blocking, without asking for its address (see RemoteAddr),
// so that accepting allocates nothing.
func Accept(lfd int) (int, Errno) {
	r, _, e := unix.RawSyscall6(unix.SYS_ACCEPT4, uintptr(lfd), 0, 0, unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0, 0)
	return int(r), e
}

// SetNoDelay turns Nagle's algorithm off. Responses are written whole and pipelined ones
// coalesced, so Nagle's delay would only add latency. Set on a listening socket, it serves
// every connection accepted after it, since Linux copies a listener's TCP options to the
// sockets it accepts: one call instead of one per connection. A failure is not worth refusing
// to serve.
func SetNoDelay(fd int) {
	unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1)
}

// DeferAccept makes a listening socket hand over a connection only once its first bytes have
// arrived, or once the kernel has held it silent for about secs seconds (TCP_DEFER_ACCEPT).
// A failure is not worth refusing to serve: the listener then hands connections over at once.
func DeferAccept(fd int, secs int) {
	unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_DEFER_ACCEPT, secs)
}

// DefersAccept reports whether a listening socket has TCP_DEFER_ACCEPT set, so that a
// connection it hands over usually has its first bytes waiting.
func DefersAccept(fd int) bool {
	v, err := unix.GetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_DEFER_ACCEPT)
	return err == nil && v > 0
}

// AcceptInheritsNoDelay reports whether sockets accepted from a listener that has TCP_NODELAY
// have it too, so that setting it once on the listener is enough.
const AcceptInheritsNoDelay = true

// RemoteAddr asks the kernel for the peer's address: kept nowhere, since few requests ask and
// every connection would pay for it.
func RemoteAddr(fd int) netip.AddrPort {
	var rsa unix.RawSockaddrAny
	n := uint32(unix.SizeofSockaddrAny)
	_, _, e := unix.RawSyscall(unix.SYS_GETPEERNAME, uintptr(fd), uintptr(unsafe.Pointer(&rsa)), uintptr(unsafe.Pointer(&n)))
	if e != 0 {
		return netip.AddrPort{}
	}
	return sockaddrAddrPort(&rsa)
}

// sockaddrAddrPort converts a socket address without allocating. It reads rsa as the IPv4 or
// IPv6 form its family names, which fits in a RawSockaddrAny (checked below at compile time).
func sockaddrAddrPort(rsa *unix.RawSockaddrAny) netip.AddrPort {
	switch rsa.Addr.Family {
	case unix.AF_INET:
		sa := (*unix.RawSockaddrInet4)(unsafe.Pointer(rsa))
		p := (*[2]byte)(unsafe.Pointer(&sa.Port))
		return netip.AddrPortFrom(netip.AddrFrom4(sa.Addr), uint16(p[0])<<8|uint16(p[1]))
	case unix.AF_INET6:
		sa := (*unix.RawSockaddrInet6)(unsafe.Pointer(rsa))
		p := (*[2]byte)(unsafe.Pointer(&sa.Port))
		return netip.AddrPortFrom(netip.AddrFrom16(sa.Addr).Unmap(), uint16(p[0])<<8|uint16(p[1]))
	}
	return netip.AddrPort{}
}

const (
	_ = uint(unix.SizeofSockaddrAny - unix.SizeofSockaddrInet4)
	_ = uint(unix.SizeofSockaddrAny - unix.SizeofSockaddrInet6)
)

// Drain returns at once: the kernel sends what closed sockets left, after the program exits too.
func Drain() {}
