//go:build !linux || dwell_portable

package coretest

import (
	"net"
	"net/netip"
	"sync"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/core/internal/netpoll"
	"github.com/dwellhttp/dwell/internal/ctxhook"
)

// A dialer makes a Client's connections. On the portable poller (other systems, and Linux with
// the build tag dwell_portable) a loop's descriptor is a number of package netpoll's, made for
// a net.Conn that a listener of its accepted: so the dialer has a listener of its own, which
// accepts from no network but takes the server's ends of the Client's connections (stream
// pairs: see streamPair), one at a time.
type dialer struct {
	mu  sync.Mutex // one connection at a time through ln
	ln  *handListener
	lfd int // ln's descriptor
}

func newDialer() (*dialer, error) {
	ln := &handListener{conns: make(chan net.Conn), next: make(chan struct{}), done: make(chan struct{})}
	lfd, err := netpoll.ListenerFD(ln)
	if err != nil {
		return nil, err
	}
	return &dialer{ln: ln, lfd: lfd}, nil
}

// dial connects a new connection to s, which serves in-process connections (ctxhook.ServeConns),
// as if from remote; it returns the client's end and the server's, for ctxhook.ConnParked.
func (d *dialer) dial(s *core.Server, remote netip.AddrPort) (net.Conn, any, error) {
	client, server, err := streamPair()
	if err != nil {
		return nil, nil, err
	}
	// The listener's goroutine (netpoll's) takes the server's end from Accept and queues it for
	// netpoll.Accept, then calls Accept again: once it has, the end is queued, and
	// netpoll.Accept takes it at once.
	d.mu.Lock()
	d.ln.conns <- server
	<-d.ln.next
	fd, e := netpoll.Accept(d.lfd)
	d.mu.Unlock()
	if e != 0 {
		client.Close()
		server.Close()
		return nil, nil, netpoll.Error("accept", e)
	}
	hook, err := ctxhook.ServeConn(s, fd, remote) // fd is the loop's now, closed on an error
	if err != nil {
		client.Close()
		return nil, nil, err
	}
	return client, hook, nil
}

func (d *dialer) close() {
	netpoll.Close(d.lfd) // not ln itself: it is ours
	close(d.ln.done)
}

// A handListener is a net.Listener whose Accept returns the connections handed to it.
type handListener struct {
	conns   chan net.Conn
	next    chan struct{} // Accept has been called again after returning a connection
	done    chan struct{} // closed by dialer.close
	handing bool          // Accept has returned a connection (on the listener's goroutine only)
}

func (l *handListener) Accept() (net.Conn, error) {
	if l.handing {
		select {
		case l.next <- struct{}{}:
		case <-l.done:
			return nil, net.ErrClosed
		}
	}
	select {
	case c := <-l.conns:
		l.handing = true
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *handListener) Close() error { return nil }

// Addr returns a TCP address, as netpoll.ListenerFD asks; none of a network.
func (l *handListener) Addr() net.Addr { return &net.TCPAddr{IP: net.IPv4(192, 0, 2, 0)} }
