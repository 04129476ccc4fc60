package core

import (
	"crypto/tls"
	"log/slog"
	"time"
)

// Options configures a Server. The zero value works: every field documents what zero and
// negative values mean and its default.
type Options struct {
	// Addr is the TCP address ListenAndServe listens on, "host:port". Empty means
	// "127.0.0.1:8080". Port 0 picks a free port; Server.Addr reports it. Server.AddListener
	// adds others.
	Addr string

	// Loops is the number of event loops. Each loop is one goroutine that owns its sockets, timers
	// and handlers; handlers of one loop never run in parallel. With N > 1 loops share nothing:
	// under ListenAndServe on Linux each accepts on its own SO_REUSEPORT listener, elsewhere (and
	// under Serve) they all accept from one listener, each connection going to one of them. Zero
	// or negative means one per CPU the Go scheduler uses (runtime.GOMAXPROCS), as net/http
	// uses every core; 1 keeps every handler on one goroutine (see operations.md on choosing).
	Loops int

	// MaxHeaderBytes bounds the request line plus header fields. A request line alone over the
	// limit is answered 414, a header section over it 431. Zero or negative means 16 KiB; values
	// over 1 MiB are lowered to 1 MiB.
	MaxHeaderBytes int

	// MaxBodyBytes bounds a request body. A Content-Length over it fails the body before any
	// byte of it is read (and without a 100 Continue); a chunked body fails as it crosses it.
	// Either way body reads return ErrBodyTooLarge, and a handler that then writes nothing gets
	// a 413 from the server, through its middleware; the connection closes after the response.
	// Seam.LimitBody lowers the limit for one request. Zero or negative means no limit.
	MaxBodyBytes int64

	// WriteHighWater is how many response bytes may wait in a connection's write queue before a
	// writing handler parks; it resumes when the queue drains below half. Zero or negative means
	// 256 KiB.
	WriteHighWater int

	// HeaderTimeout bounds the time from a request's first byte (or a new connection) to the end
	// of its header section; past it the client gets 408 and the connection closes. Zero means
	// 10 s; negative means no timeout.
	HeaderTimeout time.Duration

	// IdleTimeout bounds how long a keep-alive connection waits for the next request. Zero means
	// 60 s; negative means no timeout.
	IdleTimeout time.Duration

	// WriteTimeout bounds how long a response may make no progress: it counts only while bytes
	// wait to be written and restarts whenever the client takes some, so long streams to a
	// reading client live. Zero means 30 s; negative means no timeout.
	WriteTimeout time.Duration

	// BodyTimeout bounds how long a handler reading the request body may wait for its next
	// bytes; past it the read fails with ErrTimeout. Progress-based like WriteTimeout. Zero
	// means 30 s; negative means no timeout.
	BodyTimeout time.Duration

	// MaxConns bounds open connections per loop; at the limit the loop stops accepting (the
	// kernel backlog holds newcomers) until one closes. A handler still under way after its
	// connection was reset, or its HTTP/2 stream, counts as a connection until it returns (one
	// waiting for work that runs to its end, such as wait.Do's). Zero or negative means no
	// limit.
	MaxConns int

	// Logger receives panics from handlers, accept failures and, at debug level, refused
	// requests and write timeouts. Nil means slog.Default().
	Logger *slog.Logger

	// DisableHTTP2 serves HTTP/1.1 alone: TLS listeners do not offer "h2" by ALPN, and
	// plaintext ones answer HTTP/2's preface as the HTTP/1.1 request it is not (505). By
	// default HTTP/2 (RFC 9113) is served on every listener: chosen by ALPN over TLS, and with
	// prior knowledge (h2c) on plaintext ones. Every stream is a request served by the same
	// handler, as an HTTP/1.1 request is.
	DisableHTTP2 bool

	// DisableH2C turns off HTTP/2 with prior knowledge on plaintext listeners alone: behind a
	// proxy that must see HTTP/1.1, say. TLS listeners still offer "h2".
	DisableH2C bool

	// DisableConnectProtocol stops announcing SETTINGS_ENABLE_CONNECT_PROTOCOL on HTTP/2
	// connections. By default it is announced, so that a browser opens a page's WebSockets on
	// the page's HTTP/2 connection (RFC 8441's extended CONNECT; see Seam.ConnectProtocol), which
	// the websocket package accepts as it accepts HTTP/1.1's upgrade. Set it when WebSockets are
	// served by code that needs HTTP/1.1's Upgrade and the connection of its own — a WebSocket
	// library behind the net/http bridge, whose Hijack HTTP/2 does not offer.
	DisableConnectProtocol bool

	// DisableDeferAccept makes the listening sockets Listen opens hand over each connection as
	// soon as its TCP handshake is done. By default, on Linux, they hand it over once its first
	// bytes arrive (TCP_DEFER_ACCEPT, what nginx's "listen ... deferred" asks for): the loop then
	// accepts it, reads its request and often answers it in the same turn, without a wake-up of
	// its own or registering it with the poller first; and a client that connects and stays
	// silent costs the server nothing, held by the kernel for about HeaderTimeout (10 s when
	// there is none) before it is handed over, after which HeaderTimeout runs as for any
	// connection. A listener passed to Serve keeps its own setting, which the loops read.
	DisableDeferAccept bool

	// StallThreshold is how long a call of application code on a loop — a handler or
	// continuation until it returns or parks, a Post callback, a timer, a completion hook, a
	// Protocol's method — may block the loop's thread or run on it before it counts as a
	// stall, which holds up every connection of the loop. A stall is logged once (at level
	// Warn), with the loop, how long, what the code waited in, its innermost frame of
	// application code, the route and path of the request and the stack of the goroutine that
	// stalled, taken while it did; and counted (Server.Stalls). A loop slow for reasons of its
	// own (its own work, or waiting for a CPU on a loaded machine) is logged as such at level
	// Info, and not counted. A goroutine per server watches the loops, every quarter
	// threshold; the loops' own cost is a few instructions per turn and per call. Zero means
	// 200 ms; negative turns the detector off.
	StallThreshold time.Duration

	// TLSConfig, when set, makes the server speak HTTPS on Addr (and on the listeners added
	// with their TLS field set, see Listener): under ListenAndServe and Serve alike
	// (and ListenAndServeTLS, which adds the certificate it loads), every connection begins
	// with a TLS handshake, run on the loop with crypto/tls. It holds what a tls.Config holds
	// for net/http's servers: Certificates, or GetCertificate (SNI, reloading), ClientAuth and
	// ClientCAs (mutual TLS), session tickets, versions and cipher suites. The server uses a
	// clone (and a clone of what GetConfigForClient returns); NextProtos is what it speaks,
	// "h2" (unless DisableHTTP2) then "http/1.1", followed by any other protocol of the
	// configuration's, for a GetCertificate that answers it (ACME's "acme-tls/1"). What the
	// configuration leaves zero follows Mozilla's intermediate
	// profile rather than crypto/tls's defaults: MinVersion zero means TLS 1.2, and
	// CipherSuites nil means TLS 1.2's ECDHE suites with AES-GCM or ChaCha20-Poly1305 only,
	// without crypto/tls's CBC ones; a value set is used as it is. A plaintext request on the
	// port is answered 400, as net/http answers it. Nil means plaintext HTTP on Addr.
	TLSConfig *tls.Config

	// WriteRefusal, when set, writes the server's own answers in the application's format —
	// a JSON API's errors as JSON — in place of their short plain text: the requests refused
	// before any handler ran (400, 408, 414, 417, 431, 501, 505), and those the server answers
	// for a handler (413 for a body over the limit, 408, 400 for a broken body, 503 past a
	// deadline or at shutdown, 500 after a panic that no Seam.OnPanic responder answered). The
	// status, the framing and the connection's handling stay the server's: see Refusal. It
	// runs on the loop and must not block.
	WriteRefusal func(r *Refusal)

	// AllowCONNECT passes CONNECT requests to the handler. dwell is not a proxy, so by default
	// a CONNECT is refused with 501 before any handler runs.
	AllowCONNECT bool

	// Poller chooses how the loops learn which connections are ready, on Linux: "epoll", or
	// "io_uring", which watches them the same way through an io_uring instance per loop and
	// reads and writes the connections through it too (TLS's records once its handshake is
	// done): each turn's receives, sends, changes and the wait in one system call. Empty means what the environment variable
	// DWELL_POLLER says, so that any dwell program may be switched without a change to its
	// code; and epoll when that is empty too. Where io_uring cannot be used — disabled by the
	// kernel.io_uring_disabled sysctl, refused by a seccomp profile (Docker's default refuses
	// it), a kernel older than 5.19, not enough memory — the loops poll with epoll, and the
	// server logs why, once. Any other value fails Serve. Other systems, and the portable build,
	// have one poller of their own.
	Poller string
}
