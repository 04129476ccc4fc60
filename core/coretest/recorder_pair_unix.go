//go:build unix

package coretest

import (
	"net"
	"os"
	"syscall"
)

// streamPair returns the two ends of a pair of connected AF_UNIX stream sockets.
func streamPair() (client, server net.Conn, err error) {
	syscall.ForkLock.RLock() // no fork between the pair's making and its close-on-exec
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err == nil {
		syscall.CloseOnExec(fds[0])
		syscall.CloseOnExec(fds[1])
	}
	syscall.ForkLock.RUnlock()
	if err != nil {
		return nil, nil, os.NewSyscallError("socketpair", err)
	}
	client, err = fileConn(fds[0])
	if err != nil {
		syscall.Close(fds[1])
		return nil, nil, err
	}
	server, err = fileConn(fds[1])
	if err != nil {
		client.Close()
		return nil, nil, err
	}
	return client, server, nil
}

// fileConn returns a net.Conn for the socket fd, which it closes (the net.Conn has a duplicate).
func fileConn(fd int) (net.Conn, error) {
	f := os.NewFile(uintptr(fd), "coretest")
	defer f.Close()
	return net.FileConn(f)
}
