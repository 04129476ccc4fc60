package ctxhook

import "net/netip"

// The in-process connections of package core/coretest (its Client): a test hands one end of a
// connected pair of stream sockets to a server as if a client had connected, and speaks HTTP
// on the other, without a listening socket or a network. Package core fills these variables
// in (core/testconn.go).
var (
	// ServeConns serves s (a *core.Server) with no listening socket: its loops take only the
	// connections ServeConn hands them. Like Server.Serve it returns core.ErrServerClosed once
	// a Shutdown is over. Options.MaxConns does not apply to such connections.
	ServeConns func(s any) error

	// ServeConn hands the connected stream socket fd (on the portable poller, a descriptor of
	// its own, made by its Accept) to one of the loops of s, which ServeConns serves, as if
	// accepted from a client at remote: what Ctx.RemoteAddr returns for its requests. It
	// waits for the server to start if it has not yet, and for the loop to take fd. From then
	// on fd is the loop's, which closes it; on an error (the server is shut down or shutting
	// down) it is closed already. The result identifies the connection for ConnParked.
	ServeConn func(s any, fd int, remote netip.AddrPort) (conn any, err error)

	// ConnParked reports, asking the connection's loop, whether the handler of conn's request
	// (conn from ServeConn, which carries one request) is parked waiting for something other
	// than its own client — in Suspend or Hold (and so in the waits of package wait), or as a
	// continuation pending after Detach — and if so which of its waits it is: a number that
	// grows from one wait of the request to the next. over reports that the exchange is over:
	// the connection is closed, or its handler has finished. A handler waiting for its request
	// body or for room to write is not parked in this sense: the test's client is what it
	// waits for.
	ConnParked func(conn any) (parked bool, wait uint32, over bool)
)
