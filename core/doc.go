// Package core is dwell's HTTP/1.1 and HTTP/2 server: event loops that own every socket, a
// strict parser, and handlers that run as coroutines, so that a handler that waits parks only
// itself.
//
// # Where the code is
//
// core is the public face of dwell's server: each of its types is laid out as one of
// core/internal/serve's, and each method is a call into it, inlined. The code — the loops, the
// connections, the Ctx's machinery — is serve's, and serve's package comment is its map: the
// data path of one connection, what follows HTTP, how a handler parks. The protocols are
// packages of their own above serve, which NewServer gives every server: HTTP/1.1
// (core/internal/http1) and HTTP/2 (core/internal/http2).
//
// # Parking
//
// A handler parks by suspending its coroutine (Ctx.Suspend, a body read, a write to a slow
// client) and the loop goes on with other connections. It becomes ready through a loop timer,
// a posted task or a Waker (from any goroutine), readiness of its socket, its client leaving
// (ErrClosed) or a shutdown (ErrShutdown), and the loop resumes it at the top of its next
// iteration, never from inside another handler. Ctx.Detach is the lighter alternative: the
// handler returns and a continuation finishes the response later, so a waiting request costs no
// coroutine at all.
//
// # Rules for handlers
//
// A handler must not block its thread: a loop runs all its handlers on one goroutine, so a
// blocking call stalls every connection of the loop (Options.StallThreshold says when one
// does). Package wait runs blocking work on a worker pool (wait.Do) and provides timers, events
// and topics to wait on.
//
// A Ctx is for its request's own code only — the handler, its continuation, its hooks — while
// the request lasts: a goroutine the handler started, a Post callback or another
// request's handler is refused (ErrOutsideRequest), since a Ctx serves the next request once
// its own has ended. Such code wakes the handler with a Waker, or runs on the loop with
// Loop.Post.
//
// # Platforms
//
// On Linux the loops use epoll and raw system calls; Options.Poller (or DWELL_POLLER) may have
// them watch their sockets through io_uring instead, which then also reads and writes the
// connections' sockets (a TLS connection's records too). On every other system Go supports (and on
// Linux with the build tag dwell_portable) they use a portable poller built on Go's net package:
// the same behaviour, with a goroutine reading and one writing for each connection, and none of
// the Linux figures of docs/performance.md.
package core
