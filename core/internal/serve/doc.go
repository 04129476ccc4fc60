// Package serve is what package core's types are: the server, its loops and connections, the
// Ctx and its hooks, the connections handed over to protocols. core is its public face — the
// same names, documented there, each type laid out as this package's and each method a call
// into it — and the protocols are packages of their own between the two: HTTP/1.1
// (core/internal/http1, the server's First, which every connection speaks from its first byte)
// and HTTP/2 (core/internal/http2, the server's Multiplexer), each using what this package
// exports for them (protocols.go, the Exchange, the Socket, a Ctx's and a loop's fields), which
// is no part of dwell's API. Neither imports the other; this package imports neither.
//
// # The data path
//
// The pieces are wired together like this, for one connection on one loop:
//
//  1. the socket, polled by the loop's poller (core/internal/netpoll: epoll on Linux, or
//     io_uring (poller.go), level-triggered; a portable poller on Go's net package elsewhere),
//     in the turns of the engine's loop (core/internal/engine's loop.go), whose Driver is the
//     server's loop (loop.go: a connection's events, posted tasks, due timers, handlers made
//     ready);
//     accepted from one of the server's listeners (listener.go; the accepting, in batches and
//     with a backoff when descriptors run out, is the engine's accept.go); its bytes carried by
//     that listener's transport (transport.go picks it; the engine's transport.go: the socket
//     itself, plain; or TLS's records through crypto/tls on the loop, its handshakes after the
//     open connections' work in each turn: the engine's tls.go and tlsturn.go);
//  2. the loop's read buffer (64 KiB, shared by all its connections one turn at a time): the
//     connection's readable event (conn.go) goes to HTTP/1.1 (the server's First: http1's
//     conn.go), which reads into it, behind any bytes the connection held over from before;
//  3. the head scanner and parser (core/internal/wire: HeadScan, ParseHead): they find the end
//     of a request head without re-scanning, refuse what RFC 9112 refuses, and the head is
//     copied into an arena sized for it (internal/bufpool), so the read buffer is free
//     again at once (http1's request.go: startRequest);
//  4. the handler, running in a pooled coroutine with the request's Ctx (request.go:
//     RunHandler), which asks what the request is served on — the connection, here — through
//     the Exchange interface (exchange.go); a body is read only when it asks (Ctx.ReadBody),
//     from the bytes already buffered or straight from the socket into its buffer
//     (bodyread.go, http1's exchange.go, wire.ChunkedDecoder);
//  5. the response (response.go): held whole until the handler returns, so it gets a
//     Content-Length, or streamed chunked once it is flushed or large; its fields are
//     header.go's, a body filter (filter.go) may stand in front of it, and its head is framed
//     by the exchange (http1's exchange.go);
//  6. the request's end (http1's request.go: EndRequest), where the connection decides what
//     follows: the next request, skipping the rest of an unread body, or the close;
//  7. the connection's write queue (internal/engine/writequeue.go) of pooled chunks and file
//     segments, sent (writesend.go) through the connection's transport (transport.go), where
//     pipelined responses gather and leave in one vectored write; above WriteHighWater a
//     writing handler parks until the client has taken half;
//  8. the socket again. Unparsed leftovers move to a small pooled spill buffer between turns, so
//     an idle connection holds no buffer at all.
//
// Its main line runs through conn.go, http1's conn.go and request.go, response.go and the
// engine's writequeue.go — but with what they call on the way (the transport, the parser in
// internal/wire, the coroutines, timers, pools, hooks and stats) one request touches about
// thirty files, and an HTTP/2 stream's about forty-five (docs/design.md lists them).
// HTTP/1.1's side (package http1: its conn.go, request.go and exchange.go) drives the requests
// one after another and decides their fate; the Socket's (conn.go) is the connection's own events,
// reads, writes and close; the Ctx's side
// (ctx.go, ctxrequest.go, response.go, park.go) is what a handler sees, and reports what
// happened, with the request's bytes without a copy on a view of their own (RequestBytes,
// ctxbytes.go) and what packages built on core need of a request on another (Seam, seam.go).
//
// # After HTTP
//
// A handler may hand its connection over (Ctx.HandOver, handover.go) to another owner of its
// bytes, a Protocol such as a WebSocket, after a 101 or with nothing sent: the connection stays
// on its loop, and its bytes go to the Protocol as they arrive. Ctx.HandOverConn hands it to
// goroutines instead, as a net.Conn: the engine's GoConn (internal/engine/goconn.go), fed by a
// Protocol of core's (handoverconn.go).
//
// HTTP/2 is a package of its own above this one, core/internal/http2: the server's Multiplexer
// (protocols.go), which HTTP/1.1 asks only until a connection's first request has begun whether the
// connection's first bytes are its preface (h2c, or "h2" chosen by ALPN), and which then takes
// the connection over as a Protocol. Each stream is a request served on an exchange of its own:
// a Ctx talks to what it is served on through the Exchange interface (exchange.go), which an
// HTTP/1.1 connection (http1's conn, a Socket) and an HTTP/2 stream each implement — the body read from the
// socket or from the stream's DATA, the head framed as a status line or a HEADERS frame, the
// output written to the socket or framed as DATA within the flow-control windows, the end a
// keep-alive or END_STREAM — and both begin with a Carrier, what they share: the request being
// served, the write queue, the deadlines. A stream opened by an extended CONNECT (RFC 8441, a
// WebSocket's) is handed over to a Protocol as a connection is.
//
// # Parking
//
// A handler parks by suspending its coroutine (Ctx.Suspend, a body read, a write to a slow
// client) and the loop goes on with other connections. It becomes ready through:
//
//  1. a loop timer (timer.go, on the engine's 4-ary heap, internal/engine/timers.go; the
//     poller's timeout is the earliest deadline);
//  2. a posted task or Waker (the engine's inbox.go: a queue and a wake-up descriptor, from
//     any goroutine);
//  3. readiness of its socket, or its client leaving (ErrClosed), or a shutdown (ErrShutdown);
//
// and the loop resumes it at the top of its next iteration, never from inside another handler.
// Ctx.Detach is the lighter alternative: the handler returns and a continuation finishes the
// response later, so a waiting request costs no coroutine at all.
package serve
