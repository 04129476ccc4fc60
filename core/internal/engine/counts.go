package engine

// Counts are what a loop's transports carried and how its TLS handshakes ended, for the
// server's statistics: plain fields, written by the loop alone.
type Counts struct {
	BytesIn, BytesOut                int64
	TLSDone, TLSFailed, TLSAbandoned int64
}
