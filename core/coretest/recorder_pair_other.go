//go:build !unix

package coretest

import "net"

// streamPair returns the two ends of a TCP connection over the loopback interface, on a system
// without socket pairs: the listener it takes for it is closed at once.
func streamPair() (client, server net.Conn, err error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, nil, err
	}
	defer ln.Close()
	client, err = net.Dial("tcp", ln.Addr().String()) // complete once in the listen backlog
	if err != nil {
		return nil, nil, err
	}
	for {
		server, err = ln.Accept()
		if err != nil {
			client.Close()
			return nil, nil, err
		}
		if server.RemoteAddr().String() == client.LocalAddr().String() {
			return client, server, nil
		}
		server.Close() // another's: the port is open to the machine for a moment
	}
}
