package wire

// Byte classes of the request-target and Host (the token and field-value classes are
// internal/syntax's, which the router and the middleware share), as tables so that the
// parser's inner loops are one load and one test per byte.

// targetClass: what a request-target may hold. RFC 9112 §3.2 builds targets from URI
// characters (RFC 3986), which are ASCII: a raw byte >= 0x80 is refused (a client sends UTF-8
// percent-encoded), as are a space, a CTL and DEL, which would let the line be split
// differently by another parser, and '#', which starts a fragment a client never sends.
//
// The table classes the bytes it accepts, so that the scan that checks the target also learns
// whether it has escapes ('%', and '+' for the query) to decode: targetPlain or targetEscape.
var targetClass = func() (t [256]uint8) {
	for c := 0x21; c < 0x7f; c++ {
		t[c] = targetPlain
	}
	t['#'] = 0
	t['%'] = targetEscape
	t['+'] = targetEscape
	return t
}()

const (
	targetPlain  = 1
	targetEscape = 2
)

// isHostByte: reg-name, IP-literal and port characters of a Host value (RFC 3986 §3.2.2):
// unreserved, sub-delims, ":", "[", "]" and "%" of pct-encoding.
var isHostByte = func() (t [256]bool) {
	for c := '0'; c <= '9'; c++ {
		t[c] = true
	}
	for c := 'a'; c <= 'z'; c++ {
		t[c] = true
		t[c-'a'+'A'] = true
	}
	for _, c := range "-._~!$&'()*+,;=:[]%" {
		t[c] = true
	}
	return t
}()

// trimOWS strips optional whitespace (SP, HTAB; RFC 9110 §5.6.3) from both ends of b.
func trimOWS(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t') {
		b = b[:len(b)-1]
	}
	return b
}
