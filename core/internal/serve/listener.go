package serve

import (
	"errors"
	"fmt"
	"net"

	"github.com/dwellhttp/dwell/core/internal/netpoll"
)

// A Listener is one more address a Server listens on, beside Options.Addr: HTTPS and the plain
// port that redirects to it, say, started and shut down as one server. Add it with
// Server.AddListener.
type Listener struct {
	// Addr is the TCP address, "host:port"; port 0 picks a free port, which Server.Addrs
	// reports once the server listens.
	Addr string
	// TLS makes the listener speak HTTPS, with the server's TLS configuration
	// (Options.TLSConfig, or the certificate given to ListenAndServeTLS); without it, the
	// listener speaks plain HTTP, whatever the server's other listeners speak.
	TLS bool
	// Handler serves the requests that come by this listener; nil means the server's.
	Handler Handler
}

// AddListener makes the server listen on one more address, with its own transport and handler,
// served by the same loops under the same options, and shut down with the rest:
//
//	srv := core.NewServer(app, core.Options{Addr: ":443", TLSConfig: cfg})
//	srv.AddListener(core.Listener{Addr: ":80", Handler: router.RedirectToHTTPSAddr(srv.Addr)})
//	log.Fatal(srv.ListenAndServe())
//
// Call it before the server serves (Listen may have been called; AddListener's address is
// then opened by the next Listen, or by ListenAndServe or Serve). The error says why the
// listener was not added: the server is serving or shut down, or has 127 listeners already.
func (s *Server) AddListener(ln Listener) error {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	switch {
	case s.shutdown:
		return ErrServerClosed
	case s.started:
		return fmt.Errorf("dwell: AddListener %q: the server is serving already", ln.Addr)
	case len(s.Listenings) >= maxListeners:
		return fmt.Errorf("dwell: AddListener %q: a server has at most %d listeners", ln.Addr, maxListeners)
	}
	s.Listenings = append(s.Listenings, &listening{Listener: ln, shared: -1})
	return nil
}

// Addrs returns the addresses the server listens on: Addr's first (Options.Addr, or the
// listener given to Serve), then each AddListener's, in the order they were added. An address
// not opened yet (before Listen or Serve) is nil.
func (s *Server) Addrs() []net.Addr {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	addrs := make([]net.Addr, len(s.Listenings))
	for i, ls := range s.Listenings {
		if ls.addr != nil {
			addrs[i] = ls.addr
		}
	}
	return addrs
}

// maxListeners bounds a server's listeners: a connection names its own in 7 bits (via).
const maxListeners = 127

// A listening is one of a server's listeners as the server keeps it: the first is
// Options.Addr's (with the server's TLS configuration, if any, and its handler), the others
// AddListener's.
type listening struct {
	Listener
	FDs     []int        // the loops' listening sockets: one each (SO_REUSEPORT), or one shared
	addr    *net.TCPAddr // bound address
	shared  int          // the descriptor all loops share (Serve, or no SO_REUSEPORT); -1 when none
	sharing int          // loops still accepting from shared: the last to leave closes it
}

// open opens the listening sockets of ls for loops loops: on Linux one per loop, with
// SO_REUSEPORT when there are several; elsewhere one that the loops share. s.mu is held.
func (ls *listening) open(o *Options) error {
	if ls.FDs != nil {
		return nil
	}
	addr, err := net.ResolveTCPAddr("tcp", ls.Addr)
	if err != nil {
		return err
	}
	n := o.Loops
	if !netpoll.ReusePort {
		n = 1
	}
	var fds []int
	for i := range n {
		fd, err := netpoll.Listen(addr, n > 1)
		if err == nil && !o.DisableDeferAccept {
			netpoll.DeferAccept(fd, o.deferAcceptSeconds())
		}
		if err == nil && i == 0 {
			// The other loops bind the port the first one got.
			addr, err = netpoll.BoundAddr(fd)
		}
		if err != nil {
			for _, fd := range fds {
				netpoll.Close(fd)
			}
			return err
		}
		fds = append(fds, fd)
	}
	ls.FDs, ls.addr = fds, addr
	if len(fds) < o.Loops {
		// One listener for all the loops (no SO_REUSEPORT here): shared as under Serve.
		ls.share(fds[0], o.Loops)
	}
	return nil
}

// share makes fd the listening socket every one of loops loops accepts from.
func (ls *listening) share(fd, loops int) {
	ls.shared, ls.sharing = fd, loops
	ls.FDs = netpoll.Share(fd, loops)
}

// close closes the sockets of ls that no loop took: those of loops from loop first on, and the
// shared one. s.mu is held.
func (ls *listening) close(first int) {
	if ls.shared >= 0 {
		netpoll.Close(ls.shared)
		ls.shared = -1
	} else {
		for _, fd := range ls.FDs[min(first, len(ls.FDs)):] {
			if fd >= 0 {
				netpoll.Close(fd)
			}
		}
	}
	ls.FDs = nil
}

// ErrNoTLSConfig refuses a TLS listener on a server with no TLS configuration.
var ErrNoTLSConfig = errors.New("it speaks TLS and the server has no TLS configuration (Options.TLSConfig or ListenAndServeTLS)")
