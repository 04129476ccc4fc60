package statuspage

import (
	"context"
	"runtime/metrics"
	"time"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/wait"
)

// Version is the version of the Snapshot's shape, which it carries as "version". Fields may be
// added within a version; none is removed, renamed or given another meaning without a new one.
const Version = 1

// A Snapshot is what the JSON answer and each event of the stream carry: the server's
// statistics (core.Server.Stats), in all and per loop, and the Go runtime's. Its JSON keys are
// lower_snake_case, as the field tags say; counters count from the server's start, gauges are
// the state at the snapshot.
type Snapshot struct {
	// Version is the shape's version: Version.
	Version int `json:"version"`
	// Time is when the snapshot was taken (RFC 3339, to the nanosecond).
	Time time.Time `json:"time"`
	// Total sums the loops: its loop is -1, its as_of the latest of theirs, its
	// longest_turn_seconds the longest of any loop, and stale and stopped are true if they
	// are for any loop.
	Total Loop `json:"total"`
	// Loops has one entry per loop, by loop number; none before the server has started.
	Loops []Loop `json:"loops"`
	// Memory is the Go runtime's memory and goroutines: the whole process's, not the
	// server's alone.
	Memory Memory `json:"memory"`
}

// A Loop is one loop's statistics (or, in Snapshot.Total, all of them): core.LoopStats.
type Loop struct {
	// Loop is the loop's number, from 0; -1 in Snapshot.Total.
	Loop int `json:"loop"`
	// AsOf is when the loop copied its counters.
	AsOf time.Time `json:"as_of"`
	// Stale says that the loop did not answer in time (it is stalled), so that the values
	// are those of its previous answer but for stalls and longest_turn_seconds.
	Stale bool `json:"stale"`
	// Stopped says that the loop has stopped (after a shutdown): the values are final.
	Stopped bool `json:"stopped"`
	// Conns is the loop's open connections by state.
	Conns Conns `json:"conns"`
	// Accepted counts the connections accepted.
	Accepted int64 `json:"accepted"`
	// Requests counts the requests handed to a handler.
	Requests int64 `json:"requests"`
	// Refused counts the server's own answers by status.
	Refused Refusals `json:"refused"`
	// Panics counts the handlers and continuations that panicked.
	Panics int64 `json:"panics"`
	// BytesIn and BytesOut count the bytes read from and written to the sockets (TLS
	// records for a TLS server).
	BytesIn  int64 `json:"bytes_in"`
	BytesOut int64 `json:"bytes_out"`
	// Turns counts the loop's iterations.
	Turns int64 `json:"turns"`
	// Stalls counts the turns longer than the server's StallThreshold.
	Stalls int64 `json:"stalls"`
	// LongestTurnSeconds is the longest turn the loop has taken, in seconds.
	LongestTurnSeconds float64 `json:"longest_turn_seconds"`
	// TLS counts the TLS handshakes.
	TLS TLS `json:"tls"`
	// Rates are the counters' rates since the stream's previous event; null in a JSON answer
	// (one snapshot has no rate: a machine computes it from two), in a stream's first event,
	// and for a loop that has not answered since the previous event (stale).
	Rates *Rates `json:"rates"`
}

// Conns counts open connections by state: core.ConnStates. The states but tls,
// tls_handshaking and continuations are exclusive and add up to open. parked counts the
// requests waiting whichever the style, a handler parked in its coroutine or a continuation
// pending (core.ConnStates' Parked and Detached together), as promdwell's
// dwell_server_connections does; continuations says how many of them wait without a coroutine.
type Conns struct {
	Open       int `json:"open"`        // open connections
	Idle       int `json:"idle"`        // waiting for a request, nothing to send
	Reading    int `json:"reading"`     // part of a request head received, or a body being skipped
	Running    int `json:"running"`     // the handler runs (0: the loops copy their counts between handlers)
	Parked     int `json:"parked"`      // a request waits: a timer, an event, a body, room to write
	Working    int `json:"working"`     // the handler waits for blocking work handed off (wait.Do)
	Writing    int `json:"writing"`     // the response done, still queued for a slow client
	Closing    int `json:"closing"`     // output sent, input drained before the close
	HandedOver int `json:"handed_over"` // handed over to a Protocol: a WebSocket, a hijacked conn
	HTTP2      int `json:"http2"`       // speaking HTTP/2: their streams are below, not in open
	// Streams counts the HTTP/2 streams open, each a request; ParkedStreams those of them whose
	// handler waits.
	Streams       int `json:"streams"`
	ParkedStreams int `json:"parked_streams"`
	// TLS counts the connections over TLS, whatever their state; TLSHandshaking those of them
	// still in their handshake.
	TLS            int `json:"tls"`
	TLSHandshaking int `json:"tls_handshaking"`
	// Continuations counts, of the parked, the requests waiting as a continuation (Detach,
	// Topic.OnNext): a connection and a Ctx, no coroutine.
	Continuations int `json:"continuations"`
}

// Refusals counts the server's own answers by status: core.Refusals, with their sum.
type Refusals struct {
	Total                int64 `json:"total"`                   // all of the below
	BadRequest           int64 `json:"bad_request"`             // 400
	RequestTimeout       int64 `json:"request_timeout"`         // 408
	ContentTooLarge      int64 `json:"content_too_large"`       // 413
	URITooLong           int64 `json:"uri_too_long"`            // 414
	ExpectationFailed    int64 `json:"expectation_failed"`      // 417
	HeaderFieldsTooLarge int64 `json:"header_fields_too_large"` // 431
	NotImplemented       int64 `json:"not_implemented"`         // 501
	Unavailable          int64 `json:"unavailable"`             // 503
	VersionNotSupported  int64 `json:"version_not_supported"`   // 505
	Other                int64 `json:"other"`                   // any other status
}

// TLS counts TLS handshakes: completed, failed (an error: no shared parameters, plaintext on
// the TLS port), and abandoned (begun and never finished).
type TLS struct {
	Handshakes          int64 `json:"handshakes"`           // completed
	HandshakeFailures   int64 `json:"handshake_failures"`   // ended with an error
	HandshakesAbandoned int64 `json:"handshakes_abandoned"` // begun, never finished
}

// Rates are per-second rates of a Loop's counters over the span since the previous snapshot.
type Rates struct {
	// Seconds is the span the rates are over: between the two copies of the loop's counters.
	Seconds             float64 `json:"seconds"`
	RequestsPerSecond   float64 `json:"requests_per_second"`       // of requests
	AcceptedPerSecond   float64 `json:"accepted_per_second"`       // of accepted
	BytesInPerSecond    float64 `json:"bytes_in_per_second"`       // of bytes_in
	BytesOutPerSecond   float64 `json:"bytes_out_per_second"`      // of bytes_out
	RefusedPerSecond    float64 `json:"refused_per_second"`        // of refused.total
	StallsPerSecond     float64 `json:"stalls_per_second"`         // of stalls
	HandshakesPerSecond float64 `json:"tls_handshakes_per_second"` // of tls.handshakes
}

// Memory is the Go runtime's, from runtime/metrics (a value the runtime does not have is 0).
type Memory struct {
	// TotalBytes is all the memory the Go runtime has mapped read-write
	// (/memory/classes/total:bytes), pages it has released to the system included: what it
	// holds at most, not the resident size, and not memory that cgo code mapped.
	TotalBytes uint64 `json:"total_bytes"`
	// HeapObjectBytes is the heap occupied by objects, live or not yet swept
	// (/memory/classes/heap/objects:bytes); HeapObjects counts them (/gc/heap/objects:objects).
	HeapObjectBytes uint64 `json:"heap_object_bytes"`
	HeapObjects     uint64 `json:"heap_objects"`
	// HeapGoalBytes is the heap size at which the next collection starts (/gc/heap/goal:bytes).
	HeapGoalBytes uint64 `json:"heap_goal_bytes"`
	// GCCycles counts the completed collections (/gc/cycles/total:gc-cycles).
	GCCycles uint64 `json:"gc_cycles"`
	// Goroutines counts the live goroutines (/sched/goroutines:goroutines).
	Goroutines uint64 `json:"goroutines"`
}

// memoryMetrics are the runtime/metrics names Memory reads, in the order of readMemory.
var memoryMetrics = [...]string{
	"/memory/classes/total:bytes",
	"/memory/classes/heap/objects:bytes",
	"/gc/heap/objects:objects",
	"/gc/heap/goal:bytes",
	"/gc/cycles/total:gc-cycles",
	"/sched/goroutines:goroutines",
}

// take takes a snapshot of s for the handler of c, which it parks while a goroutine of wait's
// waits for the loops to copy their counters (core.Server.Stats, which waits, is not for a
// loop's code). It fails as wait.Call does: when the client left or a shutdown ended the wait.
func take(c *core.Ctx, s *core.Server) (Snapshot, error) {
	st, err := wait.Call(c, func(context.Context) (core.Stats, error) { return s.Stats(), nil })
	if err != nil {
		return Snapshot{}, err
	}
	sn := Snapshot{
		Version: Version,
		Time:    time.Now(),
		Total:   loopOf(&st.Total),
		Loops:   make([]Loop, len(st.Loops)),
		Memory:  readMemory(),
	}
	for i := range st.Loops {
		sn.Loops[i] = loopOf(&st.Loops[i])
	}
	return sn, nil
}

// loopOf converts a loop's statistics to their JSON shape.
func loopOf(ls *core.LoopStats) Loop {
	c, r := &ls.Conns, &ls.Refused
	return Loop{
		Loop: ls.Loop, AsOf: ls.AsOf, Stale: ls.Stale, Stopped: ls.Stopped,
		Conns: Conns{
			Open: c.Open, Idle: c.Idle, Reading: c.Reading, Running: c.Running, Parked: c.Parked + c.Detached,
			Working: c.Working, Continuations: c.Detached, Writing: c.Writing, Closing: c.Closing, HandedOver: c.HandedOver,
			HTTP2: c.HTTP2, Streams: c.Streams, ParkedStreams: c.ParkedStreams,
			TLS: c.TLS, TLSHandshaking: c.TLSHandshaking,
		},
		Accepted: ls.Accepted,
		Requests: ls.Requests,
		Refused: Refusals{
			Total: r.Total(), BadRequest: r.BadRequest, RequestTimeout: r.RequestTimeout,
			ContentTooLarge: r.ContentTooLarge, URITooLong: r.URITooLong,
			ExpectationFailed: r.ExpectationFailed, HeaderFieldsTooLarge: r.HeaderFieldsTooLarge,
			NotImplemented: r.NotImplemented, Unavailable: r.Unavailable,
			VersionNotSupported: r.VersionNotSupported, Other: r.Other,
		},
		Panics:             ls.Panics,
		BytesIn:            ls.BytesIn,
		BytesOut:           ls.BytesOut,
		Turns:              ls.Turns,
		Stalls:             ls.Stalls,
		LongestTurnSeconds: ls.LongestTurn.Seconds(),
		TLS: TLS{
			Handshakes: ls.TLSHandshakes, HandshakeFailures: ls.TLSHandshakeFailures,
			HandshakesAbandoned: ls.TLSHandshakesAbandoned,
		},
	}
}

// readMemory reads the runtime's metrics. Each call has samples of its own: snapshots are taken
// on several loops at once.
func readMemory() Memory {
	var samples [len(memoryMetrics)]metrics.Sample
	for i, name := range memoryMetrics {
		samples[i].Name = name
	}
	metrics.Read(samples[:])
	var v [len(memoryMetrics)]uint64
	for i := range samples {
		if samples[i].Value.Kind() == metrics.KindUint64 {
			v[i] = samples[i].Value.Uint64()
		}
	}
	return Memory{
		TotalBytes: v[0], HeapObjectBytes: v[1], HeapObjects: v[2], HeapGoalBytes: v[3],
		GCCycles: v[4], Goroutines: v[5],
	}
}

// addRates sets the rates of sn's loops, and of its total, from the previous snapshot prev.
func (sn *Snapshot) addRates(prev *Snapshot) {
	sn.Total.Rates = rates(&prev.Total, &sn.Total)
	for i := range sn.Loops {
		cur := &sn.Loops[i]
		for j := range prev.Loops {
			if prev.Loops[j].Loop == cur.Loop {
				cur.Rates = rates(&prev.Loops[j], cur)
				break
			}
		}
	}
}

// rates returns the rates of a loop's counters from a to b, or nil when they have none: the
// same copy (a loop stale since a), or counters that went back (another server's).
func rates(a, b *Loop) *Rates {
	secs := b.AsOf.Sub(a.AsOf).Seconds()
	if secs <= 0 || b.Requests < a.Requests || b.Accepted < a.Accepted {
		return nil
	}
	per := func(x, y int64) float64 { return float64(max(y-x, 0)) / secs }
	return &Rates{
		Seconds:             secs,
		RequestsPerSecond:   per(a.Requests, b.Requests),
		AcceptedPerSecond:   per(a.Accepted, b.Accepted),
		BytesInPerSecond:    per(a.BytesIn, b.BytesIn),
		BytesOutPerSecond:   per(a.BytesOut, b.BytesOut),
		RefusedPerSecond:    per(a.Refused.Total, b.Refused.Total),
		StallsPerSecond:     per(a.Stalls, b.Stalls),
		HandshakesPerSecond: per(a.TLS.Handshakes, b.TLS.Handshakes),
	}
}
