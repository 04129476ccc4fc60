package serve

import (
	"net"

	"github.com/dwellhttp/dwell/core/internal/engine"
)

// HandOverConn hands the request's connection over, as HandOver does (the same 101, or nothing
// for a raw takeover), to goroutines: it returns a net.Conn any goroutine may read and write,
// whose bytes the connection's loop carries — those that came behind the request's head first.
// Read returns io.EOF once the client has closed its side or a shutdown has begun, and what it
// sent has been read; Write copies its bytes and returns, waiting first while the connection's
// output is past its high-water mark (Options.WriteHighWater); Close closes the connection once
// what was written before has gone out. What the client sends is held up to 64 KiB before the
// loop stops reading it, until the goroutines have read half. The connection closes once the
// net.Conn is collected unclosed, as net/http's hijacked ones do. This is net/http's Hijack
// (the bridge's is built on it), for code that wants a goroutine and a net.Conn rather than a
// Protocol.
func (cx *Ctx) HandOverConn() (net.Conn, error) {
	cx.check("HandOverConn")
	remote := net.TCPAddrFromAddrPort(cx.RemoteAddr())
	g := engine.NewGoConn(cx.Loop, localAddrOf(remote), remote)
	hc, err := cx.HandOver(goProtocol{g})
	if err != nil {
		return nil, err
	}
	return g.Start(hc, &hc.Remote().st, hc.HighWater()), nil
}

// localAddrOf returns the address a handed connection reports as its local one: core does not say
// which of the server's addresses a connection came in on, so the unspecified address of the
// client's family stands for it.
func localAddrOf(remote net.Addr) net.Addr {
	if a, ok := remote.(*net.TCPAddr); ok && a.IP.To4() == nil {
		return &net.TCPAddr{IP: net.IPv6unspecified}
	}
	return &net.TCPAddr{IP: net.IPv4zero}
}

// A goProtocol is the Protocol of a connection handed over to goroutines: it passes what the
// connection brings to the loop side of its net.Conn (engine.GoConn).
type goProtocol struct{ g *engine.GoConn }

// Receive takes what fits of the client's bytes for the goroutines, and stops reading the socket
// once they hold engine.InBound (outside the GoConn's lock: the connection may close here).
func (p goProtocol) Receive(c *Conn, in []byte) int {
	n, full := p.g.Take(in)
	if full {
		c.PauseReading()
	}
	return n
}

// Drained has nothing to do: the Remote has woken the writers that waited for the output to go
// under the high-water mark.
func (goProtocol) Drained(*Conn) {}

// Timeout is never called: the connection's deadlines are the goroutines' side's (SetDeadline),
// and no core timeout is set.
func (goProtocol) Timeout(*Conn) {}

// Shutdown ends the connection's input, as a client's half-close would: Read returns what has
// come and then io.EOF, so that a goroutine reading its connection (a WebSocket's read loop) ends
// and closes it; its writes still go out until then, or until the shutdown's grace period ends.
// net/http leaves hijacked connections alone at a shutdown; here the shutdown would otherwise
// wait its whole grace period for every one.
func (p goProtocol) Shutdown(c *Conn) {
	p.g.EndInput()
	c.PauseReading()
}

// Closed lets the output buffer go. The Remote, told first, has woken every waiter.
func (p goProtocol) Closed(*Conn, error) { p.g.Release() }
