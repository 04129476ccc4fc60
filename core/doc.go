// Package core is dwell's HTTP/1.1 server: event loops that own every socket, a strict parser,
// and handlers that run as coroutines, so that a handler that waits parks only itself.
//
// # The data path
//
// The pieces are wired together like this, for one connection on one loop:
//
//  1. the socket, polled by the loop's poller (core/internal/netpoll: epoll on Linux,
//     level-triggered; a portable poller on Go's net package elsewhere);
//  2. the loop's read buffer (64 KiB, shared by all its connections one turn at a time): the
//     loop reads into it, behind any bytes the connection held over from before;
//  3. the head scanner and parser (core/internal/wire: HeadScan, ParseHead): they find the end
//     of a request head without re-scanning, refuse what RFC 9112 refuses, and the head is
//     copied into an arena sized for it (core/internal/bufpool), so the read buffer is free
//     again at once;
//  4. the request (wire.Request) and its body framing (body.go; wire.ChunkedDecoder): a body is
//     read only when the handler asks (Ctx.ReadBody), from the bytes already buffered or
//     straight from the socket into the handler's buffer (connbody.go);
//  5. the handler, running in a pooled coroutine (coro.go) with the request's Ctx;
//  6. the response (response.go, header.go, commit.go): held whole until the handler returns,
//     so it gets a Content-Length, or streamed chunked once it is flushed or large; a body
//     filter (filter.go) may stand in front of it;
//  7. the connection's write queue (writequeue.go) of pooled chunks and file segments, where
//     pipelined responses gather and leave in one vectored write; above WriteHighWater a
//     writing handler parks until the client has taken half;
//  8. the socket again. Unparsed leftovers move to a small pooled spill buffer between turns, so
//     an idle connection holds no buffer at all.
//
// The connection's side of this (conn.go, connrequest.go, connbody.go, conntime.go) drives the
// requests one after another; the Ctx's side (ctx.go, ctxrequest.go, response.go, park.go) is
// what a handler sees.
//
// # Parking
//
// A handler parks by suspending its coroutine (Ctx.Suspend, a body read, a write to a slow
// client) and the loop goes on with other connections. It becomes ready through:
//
//  1. a loop timer (timer.go, a 4-ary heap; the poller's timeout is the earliest deadline);
//  2. a posted task or Waker (inbox.go: a queue and a wake-up descriptor, from any goroutine);
//  3. readiness of its socket, or its client leaving (ErrClosed), or a shutdown (ErrShutdown);
//
// and the loop resumes it at the top of its next iteration, never from inside another handler.
// Ctx.Detach is the lighter alternative: the handler returns and a continuation finishes the
// response later, so a waiting request costs no coroutine at all.
//
// # Rules for handlers
//
// A handler must not block its thread: a loop runs all its handlers on one goroutine, so a
// blocking call stalls every connection of the loop (Options.StallThreshold says when one
// does). Package wait runs blocking work on a worker pool (wait.Do) and provides timers, events
// and topics to wait on.
//
// A Ctx is for its request's own code only — the handler, its continuation, its hooks — while
// the request lasts (owner.go): a goroutine the handler started, a Post callback or another
// request's handler is refused (ErrOutsideRequest), since a Ctx serves the next request once
// its own has ended. Such code wakes the handler with a Waker, or runs on the loop with
// Loop.Post.
//
// # Platforms
//
// On Linux the loops use epoll and raw system calls. On every other system Go supports (and on
// Linux with the build tag dwell_portable) they use a portable poller built on Go's net package:
// the same behaviour, with a goroutine reading and one writing for each connection, and none of
// the Linux figures of docs/performance.md.
package core
