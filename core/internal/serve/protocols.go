package serve

// The protocols a Socket is served by, besides a Protocol it is handed over to (handover.go):
// HTTP/1.1 from its first byte, and the multiplexer that may take it over before its first
// request. Each is a package of its own above this one.

// A First is the protocol every connection speaks from its first byte: HTTP/1.1, which serves
// the requests a connection carries one after another (core/internal/http1; Server.SetFirst).
// The Socket is HTTP/1.1's own connection too (its states, its input, its deadlines), and asks
// it for what only HTTP/1.1 knows.
type First interface {
	// Input reads what c's socket has, serves the requests it completes and settles c's turn.
	// c is in StIdle, StHead or StDrain.
	Input(c *Socket)
	// Exchange returns c as the exchange its requests are served on. It is the Exchange of the
	// Conn a Protocol is handed (Socket.HandOverTo), and what goes on once the client has read
	// enough of the output it held back for (Loop.Pending).
	Exchange(c *Socket) Exchange
	// Deadline acts on c's deadline that is due: a timer of kind timerConn, the first field of
	// a Socket.
	Deadline(c *Socket)
}

// A Multiplexer is a protocol that may take a connection over from HTTP/1.1 before its first
// request, by the connection's first bytes or the protocol TLS chose, and serve many requests
// on it, each on an exchange of its own (a stream) with a Ctx as an HTTP/1.1 request has:
// HTTP/2, which core gives every server (Server.SetMultiplexer). HTTP/1.1 asks it only until a
// connection's first request has begun; the rest is the multiplexer's own, behind the
// Protocol it hands the connection to, the Exchange of each stream, and the calls below.
type Multiplexer interface {
	// Chooses looks at in, the first bytes of c, which has begun no request, and reports
	// whether c is not HTTP/1.1's to serve: the multiplexer has taken it over (Socket.HandOverTo),
	// or may once more bytes have come, or has closed it.
	Chooses(c *Socket, in []byte) bool
	// MayBeDamagedPreface reports whether c, whose first line names no HTTP version at all, may
	// be a client of the multiplexer's that HTTP/1.1 cannot answer: it is closed without a word.
	MayBeDamagedPreface(c *Socket) bool
	// ALPN is the protocol name a TLS client chooses the multiplexer by ("h2").
	ALPN() string
	// NewLoop makes what the multiplexer keeps on loop l (Loop.Mux): its pools and buffers.
	NewLoop(l *Loop) any
	// Deadline is called when a timer of kind TimerStream is due: the timer of a stream's
	// Carrier, the first field of the stream.
	Deadline(t *timer, l *Loop)
}

// A StreamCounter is a handed-over connection's Protocol that serves requests on streams: it
// counts itself and its streams in a loop's statistics (Server.Stats).
type StreamCounter interface {
	CountStreams(n *ConnStates)
}

// A GraceEnder is a handed-over connection's Protocol that serves requests on streams. When a
// shutdown's grace period ends, the server calls EndGrace where it would close another
// connection handed over: the protocol ends its streams' requests as an HTTP/1.1 connection's
// is ended — each handler still under way woken with ErrShutdown (Ctx.EndGrace), so that its
// response, 503 when it had written none, still goes out — and closes the connection after
// them.
type GraceEnder interface {
	EndGrace(c *Conn)
}

// SetFirst gives the server the protocol its connections speak from their first byte, before
// it listens.
func (s *Server) SetFirst(f First) { s.first = f }

// SetMultiplexer gives the server its multiplexer, before it listens.
func (s *Server) SetMultiplexer(m Multiplexer) { s.mux = m }

// Multiplexer returns the multiplexer of l's server, or nil.
func (l *Loop) Multiplexer() Multiplexer { return l.srv.mux }
