package engine

// Counts are what a loop's transports carried, how its TLS handshakes ended and how many turns
// it took, for the server's statistics: plain fields, written by the loop alone.
type Counts struct {
	BytesIn, BytesOut                int64
	TLSDone, TLSFailed, TLSAbandoned int64
	Turns                            int64
}
