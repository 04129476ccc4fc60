// Package jetstream is wait.Topic across processes: a long-poll topic whose messages live in a
// NATS JetStream stream, so that a service runs as any number of instances behind a load
// balancer and a message published on one reaches the handlers waiting on all of them.
//
// A Topic follows one subject of a stream. Its cursors are the stream's sequence numbers, so
// they mean the same on every instance and after restarts: a client that polls instance A, then
// instance B (a deploy, a crash, a balancer's choice), goes on from its cursor and misses
// nothing.
//
// # How a message travels
//
//	handler ── Publish ──> JetStream stores it, acknowledges with its sequence number
//	stream ── one ordered consumer per Topic and process ──> the Topic's in-memory history
//	       ── wait.Sequence.Advance ──> one post per loop with waiters ──> each loop wakes its own
//
// A process follows the stream once per Topic, whatever the number of waiting handlers: they
// wait on a wait.Sequence, parked like wait.Topic's waiters (a node of a few words in their
// loop's list; no goroutine, no subscription of their own), and are woken by the loops' own
// wake-up path. A waiting request costs what it costs with wait.Topic.
//
// Recent messages are answered from memory (the last Config.History of them). A cursor older
// than that — a client back from a long absence, or any client of an instance that just
// started — is answered from the stream itself, on wait's worker pool, so the loops never block
// on NATS.
//
// # When NATS is away
//
// Publish returns only once JetStream has stored the message; without a connection it fails at
// once with ErrUnavailable, and a message it refused is never sent later (New insists on a
// connection that keeps no reconnect buffer). Handlers already waiting stay parked while the
// client library reconnects; the consumer then resumes from the last sequence it received, so
// the messages published meanwhile through other connections arrive in order, once each, and
// wake them.
package jetstream
