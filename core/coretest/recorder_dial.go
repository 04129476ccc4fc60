package coretest

import (
	"net"
	"net/netip"
	"syscall"

	"github.com/dwellhttp/dwell/core"
)

// A sockConn is a connection with a descriptor, as core.Server.ServeConn needs.
type sockConn interface {
	net.Conn
	syscall.Conn
}

// fromRemote is the server's end of a stream pair, reporting remote as its peer: what the
// handler's core.Ctx.RemoteAddr returns, since a socket pair has no address of its own.
type fromRemote struct {
	sockConn
	remote net.Addr
}

func (c fromRemote) RemoteAddr() net.Addr { return c.remote }

// dial connects a new connection to s, which serves no listener (Serve(nil)), as if from
// remote: it hands the server's end of a stream pair to s, and returns the client's end and
// what ServeConn returned, for WaitParked.
func dial(s *core.Server, remote netip.AddrPort) (net.Conn, *core.ServedConn, error) {
	client, server, err := streamPair()
	if err != nil {
		return nil, nil, err
	}
	sc, err := s.ServeConn(fromRemote{server.(sockConn), net.TCPAddrFromAddrPort(remote)})
	if err != nil { // ServeConn closed the server's end
		client.Close()
		return nil, nil, err
	}
	return client, sc, nil
}
