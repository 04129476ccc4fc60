package core

import (
	"time"

	"github.com/dwellhttp/dwell/core/internal/h2"
)

// The bound on what an HTTP/2 client may make the server do for nothing (h2conn.frame). A frame
// that carries no request — SETTINGS, PING, PRIORITY, WINDOW_UPDATE, RST_STREAM, an unknown
// type, a DATA, HEADERS or CONTINUATION that carries nothing and ends nothing — spends one of
// the connection's allowance; past it the connection ends with GOAWAY ENHANCE_YOUR_CALM. So a
// flood of them (or of 1-byte DATA frames that a client's 1-byte window updates make the server
// send) costs a bounded amount of work, whatever the client reads: what they make the server
// write is bounded by the high-water mark too, since Receive stops while the output is over it.
//
// The allowance is given back by the work the client asks for, so that a client that works is
// never ended however long it lives:
//   - each stream it opens gives back h2CalmPerStream;
//   - every h2CalmBytes of DATA the server sends or receives give back one: the window updates
//     a download or an upload needs are paid for by the bytes they let through — a client
//     that gives both windows back after every frame pays its way with frames of 512 bytes —
//     while those of a client that dribbles with windows of a few bytes are not;
//   - a PING that follows DATA the server sent since the client's last PING is free: a
//     client that measures the connection as the data arrives (gRPC's bandwidth estimator)
//     pings once per round trip of data;
//   - and one comes back every h2CalmPeriod in any case, so that keepalive PINGs on an idle
//     connection, at most one a second on average, never end it.
//
// Resets (rapid reset, CVE-2023-44487) have a bound of their own (h2conn.rstStream): a client
// may reset h2FreeResets streams before their responses are complete, and one more for every
// two it lets complete.
const (
	h2CalmMax       = 1000
	h2CalmPerStream = 10
	h2CalmBytes     = 256
	h2CalmPeriod    = time.Second
	h2FreeResets    = 200
)

// h2calm is a connection's allowance of frames that carry no request. It is kept small, as
// everything an idle connection holds is.
type h2calm struct {
	left  int16 // frames that carry no request the client may still send
	bytes uint8 // DATA bytes moved and not yet given back as allowance (< h2CalmBytes)
	sent  bool  // the server has sent DATA since the client's last PING
	at    int32 // the loop time, in h2CalmPeriods, the allowance was last given back by the clock
}

// start gives the connection its whole allowance at loop time now.
func (a *h2calm) start(now int64) {
	a.left, a.at = h2CalmMax, int32(now/int64(h2CalmPeriod))
}

// take counts a frame from the client at loop time now; it reports false once the allowance is
// spent.
func (a *h2calm) take(fh h2.Header, now int64) bool {
	if !idle(fh) {
		return true
	}
	if fh.Type == h2.TypePing && !fh.Flags.Has(h2.FlagAck) && a.sent {
		a.sent = false
		return true
	}
	if t := int32(now / int64(h2CalmPeriod)); t != a.at {
		a.give(int(t - a.at))
		a.at = t
	}
	a.left--
	return a.left >= 0
}

// give gives n frames back, within the whole allowance.
func (a *h2calm) give(n int) {
	a.left = int16(min(int(a.left)+n, h2CalmMax))
}

// sentData notes n bytes of DATA sent (see moved), and that a PING may follow.
func (a *h2calm) sentData(n int) {
	a.sent = true
	a.moved(n)
}

// moved gives back what n bytes of DATA, sent or received, earn.
func (a *h2calm) moved(n int) {
	total := int(a.bytes) + n
	a.give(total / h2CalmBytes)
	a.bytes = uint8(total % h2CalmBytes)
}

// idle reports whether a frame carries no request (see h2calm).
func idle(fh h2.Header) bool {
	switch fh.Type {
	case h2.TypeData:
		return fh.Length == 0 && !fh.Flags.Has(h2.FlagEndStream)
	case h2.TypeHeaders, h2.TypeContinuation:
		return fh.Length == 0 && !fh.Flags.Has(h2.FlagEndHeaders)
	}
	return true
}
