//go:build linux && !dwell_portable

package coretest

import (
	"net"
	"net/netip"
	"os"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/internal/ctxhook"
	"golang.org/x/sys/unix"
)

// A dialer makes a Client's connections. On Linux each is a pair of connected AF_UNIX stream
// sockets: one the loop polls with epoll as it polls an accepted TCP socket, the other the
// Client's, as a net.Conn. (A socket pair has no peer address, so the server asks none of it;
// TCP's options, TCP_NODELAY and TCP_DEFER_ACCEPT, are the listener's affair, and there is no
// listener.)
type dialer struct{}

func newDialer() (*dialer, error) { return &dialer{}, nil }

// dial connects a new connection to s, which serves in-process connections (ctxhook.ServeConns),
// as if from remote; it returns the client's end and the server's, for ctxhook.ConnParked.
func (*dialer) dial(s *core.Server, remote netip.AddrPort) (net.Conn, any, error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, os.NewSyscallError("socketpair", err)
	}
	f := os.NewFile(uintptr(fds[1]), "coretest client")
	client, err := net.FileConn(f) // a duplicate of the descriptor, in Go's poller
	f.Close()
	if err != nil {
		unix.Close(fds[0])
		return nil, nil, err
	}
	hook, err := ctxhook.ServeConn(s, fds[0], remote) // fds[0] is the loop's now, closed on an error
	if err != nil {
		client.Close()
		return nil, nil, err
	}
	return client, hook, nil
}

func (*dialer) close() {}
