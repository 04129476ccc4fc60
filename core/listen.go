package core

import (
	"errors"
	"fmt"
	"net"
	"syscall"

	"golang.org/x/sys/unix"
)

// listenBacklog is the accept queue length requested; the kernel caps it at somaxconn.
const listenBacklog = 4096

// listenTCP opens a non-blocking listening socket on addr. With reusePort several sockets may
// listen on the same address and the kernel spreads new connections over them: one per loop.
func listenTCP(addr *net.TCPAddr, reusePort bool) (int, error) {
	family := unix.AF_INET
	ip4 := addr.IP.To4()
	if addr.IP != nil && ip4 == nil {
		family = unix.AF_INET6
	}
	fd, err := unix.Socket(family, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, errnoErr("socket", err.(unix.Errno))
	}
	fail := func(call string, err error) (int, error) {
		unix.Close(fd)
		return -1, fmt.Errorf("dwell: listen on %s: %w", addr, errnoErr(call, err.(unix.Errno)))
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
	setNoDelay(fd)
	return fd, nil
}

// setNoDelay turns Nagle's algorithm off. Responses are written whole and pipelined ones
// coalesced, so Nagle's delay would only add latency. Set on a listening socket, it serves
// every connection accepted after it, since Linux copies a listener's TCP options to the
// sockets it accepts: one call instead of one per connection. A failure is not worth refusing
// to serve.
func setNoDelay(fd int) {
	unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1)
}

// boundAddr returns the address a listening socket is bound to.
func boundAddr(fd int) (*net.TCPAddr, error) {
	sa, err := unix.Getsockname(fd)
	if err != nil {
		return nil, errnoErr("getsockname", err.(unix.Errno))
	}
	switch a := sa.(type) {
	case *unix.SockaddrInet4:
		return &net.TCPAddr{IP: net.IP(a.Addr[:]).To16(), Port: a.Port}, nil
	case *unix.SockaddrInet6:
		return &net.TCPAddr{IP: net.IP(a.Addr[:]), Port: a.Port}, nil
	}
	return nil, errors.New("dwell: listener has a non-TCP address")
}

// listenerFd duplicates the descriptor of a net.Listener so that the loops can poll it.
func listenerFd(ln net.Listener) (int, error) {
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
		return -1, fmt.Errorf("dwell: Serve: %w", errnoErr("fcntl", derr.(unix.Errno)))
	}
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		return -1, fmt.Errorf("dwell: Serve: %w", errnoErr("fcntl", err.(unix.Errno)))
	}
	return fd, nil
}
