package core

import (
	"context"
	"net"
	"time"

	"github.com/dwellhttp/dwell/core/internal/http1"
	"github.com/dwellhttp/dwell/core/internal/http2"
	"github.com/dwellhttp/dwell/core/internal/serve"
	"github.com/dwellhttp/dwell/internal/alias"
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

// A ServedConn is a connection handed to a server with ServeConn.
type ServedConn struct{ x serve.ServedConn }

// A Server serves HTTP/1.1 and HTTP/2 with one or more event loops, on one address or several
// (plain and TLS, each with its own handler if it likes: AddListener). Create it with
// NewServer; start it with ListenAndServe (or Listen then ListenAndServe, to learn the
// addresses first) or Serve; stop it with Shutdown, which stops them all.
type Server struct{ x serve.Server }

// NewServer returns a Server that runs h for every request, configured by o (whose zero value
// works).
func NewServer(h Handler, o Options) *Server {
	s := serve.NewServer(alias.As[serve.Handler](h), alias.As[serve.Options](o))
	s.SetFirst(http1.New())
	s.SetMultiplexer(http2.New())
	return alias.As[*Server](s)
}

// ListenAndServe serves h on addr with default options until the process ends.
func ListenAndServe(addr string, h Handler) error {
	return NewServer(h, Options{Addr: addr}).ListenAndServe()
}

// Waiting reports, asking the connection's loop, whether the handler of the connection's
// request is parked in a wait of its own — Suspend or Hold (and so the waits of package wait),
// or a continuation pending after Detach — and which of its waits that is: a number that grows
// from one wait of the request to the next. over reports that the exchange is over: the
// connection is closed, or a request's handler has begun and is no longer running. A handler
// waiting for its request body or for room to write is not parked in this sense: what it
// waits for is its client. It is for test clients (package coretest), which wait for a
// handler to park before they do what wakes it.
func (sc *ServedConn) Waiting() (parked bool, wait uint32, over bool) {
	return sc.x.Waiting()
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
	return s.x.AddListener(alias.As[serve.Listener](ln))
}

// Addrs returns the addresses the server listens on: Addr's first (Options.Addr, or the
// listener given to Serve), then each AddListener's, in the order they were added. An address
// not opened yet (before Listen or Serve) is nil.
func (s *Server) Addrs() []net.Addr {
	return s.x.Addrs()
}

// ServeConn hands c, a connection accepted elsewhere, to one of the server's loops, which
// serves it from then on as if the server's first listener had accepted it (with that
// listener's TLS, if it has some). The loop takes c's descriptor over: on Linux it keeps a
// duplicate and c is closed; elsewhere it reads and writes c itself. c must have a descriptor
// (a *net.TCPConn or *net.UnixConn, or a type embedding one). When c.RemoteAddr is a
// *net.TCPAddr, it is what Ctx.RemoteAddr and Conn.RemoteAddr return for the connection;
// otherwise they ask the socket.
//
// ServeConn waits for the server to start if it has not yet (Serve(nil) serves no listener but
// takes these), and for the loop to take the connection. Options.MaxConns does not apply. On an
// error — the server is shut down or shutting down, or c has no descriptor — c is closed.
func (s *Server) ServeConn(c net.Conn) (*ServedConn, error) {
	r0, r1 := s.x.ServeConn(c)
	return alias.As[*ServedConn](r0), r1
}

// Listen opens the listening sockets on Options.Addr and on the addresses of AddListener — on
// Linux one per loop, with SO_REUSEPORT when there are several; elsewhere one that the loops
// share — without serving yet, so that Addr and Addrs are known (port 0 picks a free port).
// ListenAndServe calls it if it has not been called. When an address cannot be opened, none
// that this call opened stays open.
func (s *Server) Listen() error {
	return s.x.Listen()
}

// ListenAndServe listens on Options.Addr and the addresses of AddListener (unless Listen
// already did) and serves until Shutdown, after which it returns ErrServerClosed.
func (s *Server) ListenAndServe() error {
	return s.x.ListenAndServe()
}

// Serve serves connections accepted from ln, in place of Options.Addr, and those of the
// addresses of AddListener, until Shutdown, after which it returns ErrServerClosed. ln must be
// a TCP listener with a file descriptor (as net.Listen returns); with several loops all of them
// accept from it. With a nil ln the server listens on no address of Options.Addr's: it serves
// what AddListener added, if anything, and the connections ServeConn hands it. After Listen,
// which opened Options.Addr, Serve with a listener fails: serve that with ListenAndServe.
func (s *Server) Serve(ln net.Listener) error {
	return s.x.Serve(ln)
}

// Addr returns the address the server listens on — Options.Addr's, or that of the listener
// given to Serve — once Listen or Serve has been called (nil before). Addrs has the others.
func (s *Server) Addr() net.Addr {
	return s.x.Addr()
}

// Shutdown stops the server gracefully: it stops accepting — every loop takes the connections
// already queued and closes its listening sockets before any connection is told, so that a
// client that connects again is refused, not reset — closes idle connections (serving first a
// request that has arrived on one, and letting one whose head is arriving finish it), and lets
// running and parked handlers finish, closing each connection after its response; waits that
// asked for it (Seam.WakeOnShutdown: long polls, event streams) end at once with ErrShutdown.
// It returns nil once every connection has closed. When ctx ends first, Shutdown returns
// ctx.Err() at once, after telling the loops that the grace period is over: the handlers still
// waiting, on HTTP/1.1 and HTTP/2 alike, are woken with ErrShutdown (their Context is
// cancelled), their answers still go out (503 from a handler that wrote none), and their
// connections close as they return — a connection handed over (a WebSocket's) at once, as does
// an HTTP/2 stream handed over, and an HTTP/2 stream still waiting for a handler's place is
// refused (REFUSED_STREAM); ListenAndServe (or Serve) returns once the last has closed.
func (s *Server) Shutdown(ctx context.Context) error {
	return s.x.Shutdown(ctx)
}

// RegisterOnShutdown registers f to be called, on a goroutine of its own, when Shutdown is first
// called: at the start of the grace period, as net/http's Server.RegisterOnShutdown. It is how
// work that the server cannot see learns that a shutdown has begun — the handlers behind the
// net/http bridge (a gRPC server's streams, whose requests' contexts end only with the grace
// period), goroutines following a topic, a connection pool of the application's — so that it
// can end what would otherwise hold the shutdown until the grace period ends: f should start
// that, and not wait for it. dwell's own waits need no hook (Seam.WakeOnShutdown). A function
// registered once Shutdown has been called starts at once.
func (s *Server) RegisterOnShutdown(f func()) {
	s.x.RegisterOnShutdown(f)
}

// ListenAndServeTLS is ListenAndServe over TLS, as net/http's: certFile and keyFile hold the
// server's certificate (followed by any intermediates) and its private key, in PEM. They may
// be empty when Options.TLSConfig has Certificates, GetCertificate or GetConfigForClient.
func (s *Server) ListenAndServeTLS(certFile, keyFile string) error {
	return s.x.ListenAndServeTLS(certFile, keyFile)
}

// Stalls returns how many times application code has stalled the server's loops (see
// Options.StallThreshold) and the longest turn any loop has taken, stall or not. It may be
// called from any goroutine.
func (s *Server) Stalls() (n int64, longest time.Duration) {
	return s.x.Stalls()
}

// Stats returns the server's statistics: per loop, and their sum. It may be called from any
// goroutine of the application's, at any time (before the server starts it returns zeros). It
// asks each loop for a copy and waits for them — a turn of each loop at most, up to 100 ms; a
// loop that does not answer by then is reported as it was last, marked Stale. Since it waits
// for the loops, code that runs on a loop must not call it (it panics there): a handler calls it
// through wait.Do, which parks the handler, not its loop, while a goroutine waits.
func (s *Server) Stats() Stats {
	return alias.As[Stats](s.x.Stats())
}
