package core

import (
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The loop's sockets are non-blocking, so these calls return at once; they go through
// RawSyscall to skip the scheduler hand-off that a possibly-blocking syscall pays for. The calls
// that read a file (pread, sendfile) can block on the disk when the page cache is cold, and
// epoll_wait with a timeout blocks by design: those take the ordinary path, which lets the
// runtime give the loop's processor to other goroutines meanwhile. Each returns the errno itself
// so the hot path never boxes an error.

func sysRead(fd int, p []byte) (int, unix.Errno) {
	if len(p) == 0 {
		return 0, 0
	}
	r, _, e := unix.RawSyscall(unix.SYS_READ, uintptr(fd), uintptr(unsafe.Pointer(unsafe.SliceData(p))), uintptr(len(p)))
	return int(r), e
}

func sysWrite(fd int, p []byte) (int, unix.Errno) {
	if len(p) == 0 {
		return 0, 0
	}
	r, _, e := unix.RawSyscall(unix.SYS_WRITE, uintptr(fd), uintptr(unsafe.Pointer(unsafe.SliceData(p))), uintptr(len(p)))
	return int(r), e
}

func sysWritev(fd int, iov []unix.Iovec) (int, unix.Errno) {
	r, _, e := unix.RawSyscall(unix.SYS_WRITEV, uintptr(fd), uintptr(unsafe.Pointer(unsafe.SliceData(iov))), uintptr(len(iov)))
	return int(r), e
}

// sysPread reads a file: from the page cache, as sendfile does, so it returns at once unless
// the disk has to be read.
func sysPread(fd int, p []byte, off int64) (int, unix.Errno) {
	r, _, e := unix.Syscall6(unix.SYS_PREAD64, uintptr(fd), uintptr(unsafe.Pointer(unsafe.SliceData(p))), uintptr(len(p)), uintptr(off), 0, 0)
	return int(r), e
}

// sysSendmsgMore writes iov with MSG_MORE: the kernel holds the bytes back, as TCP_CORK would,
// until a following send without the flag, so that a response head and the file that sendfile
// sends behind it leave in the same segments instead of the head in a packet of its own.
func sysSendmsgMore(fd int, iov []unix.Iovec) (int, unix.Errno) {
	msg := unix.Msghdr{Iov: unsafe.SliceData(iov)}
	msg.SetIovlen(len(iov))
	r, _, e := unix.RawSyscall(unix.SYS_SENDMSG, uintptr(fd), uintptr(unsafe.Pointer(&msg)), unix.MSG_MORE|unix.MSG_NOSIGNAL)
	return int(r), e
}

func sysSendfile(out, in int, off *int64, n int) (int, unix.Errno) {
	r, _, e := unix.Syscall6(unix.SYS_SENDFILE, uintptr(out), uintptr(in), uintptr(unsafe.Pointer(off)), uintptr(n), 0, 0)
	return int(r), e
}

// sysClose closes a socket. Without SO_LINGER, close(2) on a socket returns at once: the kernel
// sends what is left and the FIN on its own.
func sysClose(fd int) {
	unix.RawSyscall(unix.SYS_CLOSE, uintptr(fd), 0, 0)
}

// sysResetOnClose makes the next close of the socket reset the connection (SO_LINGER with a
// zero timeout) instead of ending it with a FIN: for a response that must not look complete.
func sysResetOnClose(fd int) {
	unix.SetsockoptLinger(fd, unix.SOL_SOCKET, unix.SO_LINGER, &unix.Linger{Onoff: 1, Linger: 0})
}

// sysAccept accepts a connection without asking for its address (see conn.remoteAddr), so that
// accepting allocates nothing.
func sysAccept(fd int) (int, unix.Errno) {
	r, _, e := unix.RawSyscall6(unix.SYS_ACCEPT4, uintptr(fd), 0, 0, unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0, 0)
	return int(r), e
}

// errnoErr turns an errno into an error naming the call, for the rare paths that report one.
func errnoErr(call string, e unix.Errno) error {
	return os.NewSyscallError(call, e)
}
