//go:build linux && !dwell_portable

package core_test

import (
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// refuseIOUringSetup installs, on every thread of the process, a seccomp filter under which
// io_uring_setup fails with EPERM, as under Docker's default profile, and every other call is
// allowed. It cannot be undone.
func refuseIOUringSetup() error {
	const (
		ldAbsW  = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
		jeqK    = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
		retK    = unix.BPF_RET | unix.BPF_K
		nrAt    = 0                               // struct seccomp_data: the call's number first
		retErr  = 0x00050000 | uint32(unix.EPERM) // SECCOMP_RET_ERRNO
		retOK   = 0x7fff0000                      // SECCOMP_RET_ALLOW
		setMode = 1                               // SECCOMP_SET_MODE_FILTER
		tsync   = 1                               // SECCOMP_FILTER_FLAG_TSYNC: every thread
	)
	filter := []unix.SockFilter{
		{Code: ldAbsW, K: nrAt},
		{Code: jeqK, Jt: 0, Jf: 1, K: unix.SYS_IO_URING_SETUP},
		{Code: retK, K: retErr},
		{Code: retK, K: retOK},
	}
	prog := unix.SockFprog{Len: uint16(len(filter)), Filter: &filter[0]}
	runtime.LockOSThread() // no_new_privs is set on this thread; TSYNC gives it to the others
	defer runtime.UnlockOSThread()
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return err
	}
	if _, _, e := unix.Syscall(unix.SYS_SECCOMP, setMode, tsync, uintptr(unsafe.Pointer(&prog))); e != 0 {
		return e
	}
	return nil
}
