//go:build linux && !dwell_portable

package netpoll

import (
	"errors"
	"fmt"
	"net"
	"syscall"

	"golang.org/x/sys/unix"
)

// listenBacklog is the accept queue length requested; the kernel caps it at somaxconn.
const listenBacklog = 4096

// ReusePort reports whether several loops can listen on one address with a socket each
// (SO_REUSEPORT), the kernel spreading new connections over them.
const ReusePort = true

// Listen opens a non-blocking listening socket on addr. With reusePort several sockets may
// listen on the same address and the kernel spreads new connections over them: one per loop.
func Listen(addr *net.TCPAddr, reusePort bool) (int, error) {
	family := unix.AF_INET
	ip4 := addr.IP.To4()
	if addr.IP != nil && ip4 == nil {
		family = unix.AF_INET6
	}
	fd, err := unix.Socket(family, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, Error("socket", err.(unix.Errno))
	}
	fail := func(call string, err error) (int, error) {
		unix.Close(fd)
		return -1, fmt.Errorf("dwell: listen on %s: %w", addr, Error(call, err.(unix.Errno)))
	}
	if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_REUSEADDR, 1); err != nil {
		return fail("setsockopt", err)
	}
	if reusePort {
		if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_REUSEPORT, 1); err != nil {
			return fail("setsockopt", err)
		}
	}
	var sa unix.Sockaddr
	if family == unix.AF_INET {
		a := &unix.SockaddrInet4{Port: addr.Port}
		if ip4 != nil {
			copy(a.Addr[:], ip4)
		}
		sa = a
	} else {
		a := &unix.SockaddrInet6{Port: addr.Port}
		copy(a.Addr[:], addr.IP.To16())
		sa = a
	}
	if err := unix.Bind(fd, sa); err != nil {
		return fail("bind", err)
	}
	if err := unix.Listen(fd, listenBacklog); err != nil {
		return fail("listen", err)
	}
	SetNoDelay(fd)
	return fd, nil
}

// BoundAddr returns the address a listening socket is bound to.
func BoundAddr(fd int) (*net.TCPAddr, error) {
	sa, err := unix.Getsockname(fd)
	if err != nil {
		return nil, Error("getsockname", err.(unix.Errno))
	}
	switch a := sa.(type) {
	case *unix.SockaddrInet4:
		return &net.TCPAddr{IP: net.IP(a.Addr[:]).To16(), Port: a.Port}, nil
	case *unix.SockaddrInet6:
		return &net.TCPAddr{IP: net.IP(a.Addr[:]), Port: a.Port}, nil
	}
	return nil, errors.New("dwell: listener has a non-TCP address")
}

// ListenerFD duplicates the descriptor of a net.Listener so that the loops can poll it; close
// it with Close when done. The listener itself stays the caller's.
func ListenerFD(ln net.Listener) (int, error) {
	sc, ok := ln.(syscall.Conn)
	if !ok {
		return -1, fmt.Errorf("dwell: Serve needs a listener with a file descriptor, not %T", ln)
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return -1, fmt.Errorf("dwell: Serve: %w", err)
	}
	fd := -1
	var derr error
	if err := raw.Control(func(s uintptr) {
		fd, derr = unix.FcntlInt(s, unix.F_DUPFD_CLOEXEC, 0)
	}); err != nil {
		return -1, fmt.Errorf("dwell: Serve: %w", err)
	}
	if derr != nil {
		return -1, fmt.Errorf("dwell: Serve: %w", Error("fcntl", derr.(unix.Errno)))
	}
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		return -1, fmt.Errorf("dwell: Serve: %w", Error("fcntl", err.(unix.Errno)))
	}
	return fd, nil
}

// ConnFD makes a descriptor of c, a connection accepted elsewhere, so that a loop can serve it:
// a non-blocking duplicate of c's, after which c is closed. Close the result with Close.
func ConnFD(c net.Conn) (int, error) {
	sc, ok := c.(syscall.Conn)
	if !ok {
		c.Close()
		return -1, fmt.Errorf("dwell: ServeConn needs a connection with a file descriptor, not %T", c)
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		c.Close()
		return -1, fmt.Errorf("dwell: ServeConn: %w", err)
	}
	fd := -1
	var derr error
	err = raw.Control(func(s uintptr) {
		fd, derr = unix.FcntlInt(s, unix.F_DUPFD_CLOEXEC, 0)
	})
	c.Close()
	switch {
	case err != nil:
		return -1, fmt.Errorf("dwell: ServeConn: %w", err)
	case derr != nil:
		return -1, fmt.Errorf("dwell: ServeConn: %w", Error("fcntl", derr.(unix.Errno)))
	}
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		return -1, fmt.Errorf("dwell: ServeConn: %w", Error("fcntl", err.(unix.Errno)))
	}
	return fd, nil
}

// Share returns n descriptors for the listener fd, one for each of n loops that accept from it:
// on Linux all n are fd itself, each loop registering it with EPOLLEXCLUSIVE (see
// Poller.AddListener), so that the kernel wakes one loop for each new connection.
func Share(fd, n int) []int {
	fds := make([]int, max(n, 1))
	for i := range fds {
		fds[i] = fd
	}
	return fds
}
