package h2

import "time"

// The bound on what an HTTP/2 client may make the server do for nothing (a server connection's
// Calm, which http2's h2conn.frame consults). A frame that carries no request — SETTINGS, PING, PRIORITY, WINDOW_UPDATE, RST_STREAM, an unknown
// type, a DATA, HEADERS or CONTINUATION that carries nothing and ends nothing — spends one of
// the connection's allowance; past it the connection ends with GOAWAY ENHANCE_YOUR_CALM. So a
// flood of them (or of 1-byte DATA frames that a client's 1-byte window updates make the server
// send) costs a bounded amount of work, whatever the client reads: what they make the server
// write is bounded by the high-water mark too, since Receive stops while the output is over it.
//
// The allowance is given back by the work the client asks for, so that a client that works is
// never ended however long it lives:
//   - each stream it opens gives back CalmPerStream;
//   - every CalmBytes of DATA the server sends or receives give back one: the window updates
//     a download or an upload needs are paid for by the bytes they let through — a client
//     that gives both windows back after every frame pays its way with frames of 512 bytes —
//     while those of a client that dribbles with windows of a few bytes are not;
//   - a PING that follows DATA the server sent since the client's last PING is free: a
//     client that measures the connection as the data arrives (gRPC's bandwidth estimator)
//     pings once per round trip of data;
//   - and one comes back every CalmPeriod in any case, so that keepalive PINGs on an idle
//     connection, at most one a second on average, never end it.
//
// Resets have a bound of their own (http2's h2conn.spendReset): FreeResets streams may be reset
// before their responses are complete, and one more for every two that complete — reset by the
// client (rapid reset, CVE-2023-44487) or by the server for a frame of the client's that was a
// stream error, or a new stream refused (MadeYouReset, CVE-2025-8671).
const (
	CalmMax       = 1000        // the whole allowance, a new connection's
	CalmPerStream = 10          // given back by each stream the client opens
	CalmBytes     = 256         // the DATA bytes, sent or received, that give back one
	CalmPeriod    = time.Second // the time that gives back one
	FreeResets    = 200         // the streams that may be reset before their responses end
)

// A Calm is a connection's allowance of frames that carry no request. It is kept small, as
// everything an idle connection holds is.
type Calm struct {
	left  int16 // frames that carry no request the client may still send
	bytes uint8 // DATA bytes moved and not yet given back as allowance (< CalmBytes)
	sent  bool  // the server has sent DATA since the client's last PING
	at    int32 // the loop time, in CalmPeriods, the allowance was last given back by the clock
}

// Start gives the connection its whole allowance at loop time now.
func (a *Calm) Start(now int64) {
	a.left, a.at = CalmMax, int32(now/int64(CalmPeriod))
}

// Take counts a frame from the client at loop time now; it reports false once the allowance is
// spent.
func (a *Calm) Take(fh Header, now int64) bool {
	if !idle(fh) {
		return true
	}
	if fh.Type == TypePing && !fh.Flags.Has(FlagAck) && a.sent {
		a.sent = false
		return true
	}
	if t := int32(now / int64(CalmPeriod)); t != a.at {
		a.Give(int(t - a.at))
		a.at = t
	}
	a.left--
	return a.left >= 0
}

// Give gives n frames back, within the whole allowance.
func (a *Calm) Give(n int) {
	a.left = int16(min(int(a.left)+n, CalmMax))
}

// SentData notes n bytes of DATA sent (see moved), and that a PING may follow.
func (a *Calm) SentData(n int) {
	a.sent = true
	a.Moved(n)
}

// Moved gives back what n bytes of DATA, sent or received, earn.
func (a *Calm) Moved(n int) {
	total := int(a.bytes) + n
	a.Give(total / CalmBytes)
	a.bytes = uint8(total % CalmBytes)
}

// idle reports whether a frame carries no request (see Calm).
func idle(fh Header) bool {
	switch fh.Type {
	case TypeData:
		return fh.Length == 0 && !fh.Flags.Has(FlagEndStream)
	case TypeHeaders, TypeContinuation:
		return fh.Length == 0 && !fh.Flags.Has(FlagEndHeaders)
	}
	return true
}
