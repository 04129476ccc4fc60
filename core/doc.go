// Package core is dwell's HTTP/1.1 server: event loops that own every socket, a strict parser,
// and handlers that run as coroutines, so that a handler that waits parks only itself.
//
// # The data path
//
// The pieces are wired together like this, for one connection on one loop:
//
//  1. the socket, polled by the loop's epoll instance (level-triggered);
//  2. the loop's read buffer (64 KiB, shared by all its connections one turn at a time): the
//     loop reads into it, behind any bytes the connection held over from before;
//  3. the head scanner and parser (scan.go, parse.go): they find the end of a request head
//     without re-scanning, refuse what RFC 9112 refuses, and copy the head into a pooled arena
//     sized for it, so the read buffer is free again at once;
//  4. the request (request.go) and its body framing (body.go, chunked.go): a body is read only
//     when the handler asks (Ctx.ReadBody), from the bytes already buffered or straight from the
//     socket into the handler's buffer;
//  5. the handler, running in a pooled coroutine (coro.go) with the request's Ctx;
//  6. the response (response.go, commit.go): held whole until the handler returns, so it gets a
//     Content-Length, or streamed chunked once it is flushed or large;
//  7. the connection's write queue (writequeue.go) of pooled chunks and sendfile segments, where
//     pipelined responses gather and leave in one writev; above WriteHighWater a writing handler
//     parks until the client has taken half;
//  8. the socket again. Unparsed leftovers move to a small pooled spill buffer between turns, so
//     an idle connection holds no buffer at all.
//
// # Parking
//
// A handler parks by suspending its coroutine (Ctx.Suspend, a body read, a write to a slow
// client) and the loop goes on with other connections. It becomes ready through:
//
//  1. a loop timer (timer.go, a 4-ary heap; the loop's epoll timeout is the earliest deadline);
//  2. a posted task or Waker (inbox.go: a queue and an eventfd, from any goroutine);
//  3. readiness of its socket, or its client leaving (ErrClosed), or a shutdown (ErrShutdown);
//
// and the loop resumes it at the top of its next iteration, never from inside another handler.
// Ctx.Detach is the lighter alternative: the handler returns and a continuation finishes the
// response later, so a waiting request costs no coroutine at all.
//
// # Rules for handlers
//
// A handler must not block its thread: a loop runs all its handlers on one goroutine, so a
// blocking call stalls every connection of the loop. Package wait runs blocking work on a worker
// pool (wait.Do) and provides timers, events and topics to wait on.
package core
