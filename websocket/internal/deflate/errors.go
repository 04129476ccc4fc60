package deflate

import "errors"

var (
	// ErrMalformed is returned by Negotiate for field lines that do not follow RFC 6455 §9.1's
	// grammar. The server cannot tell what was offered: it declines every extension, or refuses
	// the handshake, as the websocket package does (400).
	ErrMalformed = errors.New("websocket: malformed Sec-WebSocket-Extensions")
	// ErrTooLarge is returned by Decompress when a message inflates to more than its limit.
	// The caller closes the connection with 1009 (message too big, RFC 6455 §7.4.1).
	ErrTooLarge = errors.New("websocket: decompressed message too large")
	// ErrCorrupt is returned by Decompress for a payload that is not a DEFLATE stream as RFC 7692
	// §7.2.2 makes it (with 0x00 0x00 0xff 0xff appended). The caller closes the connection with
	// 1007 (RFC 6455 §7.4.1: "data within a message that was not consistent with the type of the
	// message") or 1002.
	ErrCorrupt = errors.New("websocket: corrupt compressed message")
)
