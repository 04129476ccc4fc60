package core

import (
	"time"

	"github.com/dwellhttp/dwell/core/internal/serve"
	"github.com/dwellhttp/dwell/internal/alias"
)

// Stats is a snapshot of a server's statistics: its loops' and their sum. Counters count from
// the server's start; gauges (Conns) are the state at the snapshot.
type Stats struct {
	// Total sums the loops' statistics; its Loop is -1, LongestTurn is the longest of any
	// loop, AsOf the latest of theirs, and Stale and Stopped are set if they are for any loop.
	Total LoopStats
	// Loops has one entry per loop, in the order of their numbers (LoopStats.Loop).
	Loops []LoopStats
}

// LoopStats is what one loop (or, in Stats.Total, all of them) has done and holds.
type LoopStats struct {
	// Loop is the loop's number, from 0; -1 in Stats.Total.
	Loop int
	// AsOf is when the loop made the copy.
	AsOf time.Time
	// Stale says that the loop did not answer in time — it is stalled, blocked by a handler or
	// a callback — so that the values are those of its previous answer (zero if none), but for
	// Stalls and LongestTurn, which are always current.
	Stale bool
	// Stopped says that the loop has stopped (after a shutdown): the values are final, and no
	// connection is open.
	Stopped bool

	// Accepted counts the connections accepted.
	Accepted int64
	// Requests counts the requests whose head was parsed and accepted, and handed to the
	// handler: every request but those refused before a handler ran (see Refused).
	Requests int64
	// Refused counts the server's own answers, by status: requests refused before their
	// handler ran, and the answers the server gave for a handler (a request body that failed,
	// a deadline, a shutdown). A handler's panic is counted in Panics instead.
	Refused Refusals
	// Panics counts the handlers and continuations that panicked (or called runtime.Goexit),
	// ErrAbortHandler's deliberate aborts aside.
	Panics int64
	// BytesIn and BytesOut count the bytes read from and written to the connections' sockets:
	// TLS records for a TLS server, not their plaintext.
	BytesIn, BytesOut int64
	// Turns counts the loop's iterations: a poll and the handling of what it found.
	Turns int64
	// Stalls counts the stalls application code caused (see Options.StallThreshold and
	// Server.Stalls), once reported: a stall still under way is counted once it ends.
	Stalls int64
	// LongestTurn is the longest turn the loop has taken, stall or not.
	LongestTurn time.Duration
	// TLSHandshakes counts the TLS handshakes completed; TLSHandshakeFailures those that ended
	// with an error (a client hello refused, no shared parameters, a plaintext request on the
	// TLS port — also counted as a refused 400); TLSHandshakesAbandoned the handshakes begun
	// and never finished: the client left (its input ended), or the connection was closed (a
	// timeout, a shutdown).
	TLSHandshakes, TLSHandshakeFailures, TLSHandshakesAbandoned int64

	// Conns is the loop's connections by state, at the snapshot.
	Conns ConnStates
}

// ConnStates counts open connections by state. The states but TLS and TLSHandshaking are
// exclusive: they add up to Open.
type ConnStates struct {
	// Open counts the connections open.
	Open int
	// Idle counts the connections waiting for a request, with nothing to send: a new one, or
	// one kept alive between requests.
	Idle int
	// Reading counts the connections that have sent part of a request head, or of the body of
	// a request whose handler is done and which the loop discards.
	Reading int
	// Running counts the connections whose handler was running when the loop copied its
	// statistics. A loop copies them between handlers' turns, so it is 0; it stays so that the
	// states add up to Open whatever a later loop does.
	Running int
	// Parked counts the connections whose handler is parked: waiting for its body, for room
	// to write, for a timer, an event or a Waker, or woken and about to resume.
	Parked int
	// Working counts the connections whose handler waits for blocking work it handed to
	// another goroutine (wait.Do): busy, rather than waiting for an event.
	Working int
	// Detached counts the connections whose handler has returned after Ctx.Detach, its
	// continuation pending.
	Detached int
	// Writing counts the connections whose handler is done while its response (or the
	// server's own answer) is still queued, waiting for the client to take it.
	Writing int
	// Closing counts the connections closing: their output sent, their input drained for a
	// moment before the close (so that a client still sending reads its response).
	Closing int
	// HandedOver counts the connections handed over from HTTP to a Protocol (Ctx.HandOver): a
	// WebSocket, a hijacked net/http connection.
	HandedOver int
	// HTTP2 counts the connections speaking HTTP/2. Their streams are requests, counted apart
	// (not in Open): Streams those open, and of them ParkedStreams those whose handler is parked
	// (or detached), as Parked counts connections; a stream handed over (a WebSocket on an
	// HTTP/2 connection) is open, never parked.
	HTTP2, Streams, ParkedStreams int
	// TLS counts the open connections over TLS, whatever their state; TLSHandshaking those of
	// them whose handshake has not ended yet (they are Idle).
	TLS, TLSHandshaking int
}

// Refusals counts the server's own answers by status.
type Refusals struct {
	// BadRequest counts 400s: a malformed request head, a broken chunked body, a body cut
	// short, plaintext HTTP on the TLS port.
	BadRequest int64
	// RequestTimeout counts 408s: a head not complete within HeaderTimeout, a body that stopped
	// coming within BodyTimeout.
	RequestTimeout int64
	// ContentTooLarge counts 413s: a body over MaxBodyBytes (or a handler's limit).
	ContentTooLarge int64
	// URITooLong counts 414s: a request line over MaxHeaderBytes.
	URITooLong int64
	// ExpectationFailed counts 417s: an Expect other than 100-continue.
	ExpectationFailed int64
	// HeaderFieldsTooLarge counts 431s: a header section over MaxHeaderBytes.
	HeaderFieldsTooLarge int64
	// NotImplemented counts 501s: a transfer coding other than chunked, CONNECT.
	NotImplemented int64
	// Unavailable counts 503s: a request past its deadline (Ctx.SetTimeout), or whose handler
	// wrote nothing after a shutdown ended its wait.
	Unavailable int64
	// VersionNotSupported counts 505s: a major version other than 1.
	VersionNotSupported int64
	// Other counts the answers of any other status.
	Other int64
}

// Total returns the number of answers counted.
func (r Refusals) Total() int64 {
	return alias.As[serve.Refusals](r).Total()
}
