package frame

import "errors"

// Errors of Parse and ParseClose. Each is a violation of RFC 6455 that fails the connection
// (§7.1.7); the comment says with which close code (§7.4.1) the caller answers.
var (
	// ErrReservedOpcode: the opcode is one of 3-7 or 11-15, reserved for future use (§5.2).
	// Close with CloseProtocolError.
	ErrReservedOpcode = errors.New("websocket: reserved opcode")
	// ErrFragmentedControl: a control frame without FIN (§5.4, §5.5). Close with
	// CloseProtocolError.
	ErrFragmentedControl = errors.New("websocket: fragmented control frame")
	// ErrControlTooLong: a control frame with a payload over 125 bytes (§5.5). Close with
	// CloseProtocolError.
	ErrControlTooLong = errors.New("websocket: control frame payload over 125 bytes")
	// ErrLengthOverflow: a 64-bit payload length with its most significant bit set (§5.2).
	// Close with CloseProtocolError.
	ErrLengthOverflow = errors.New("websocket: payload length with its most significant bit set")

	// ErrCloseLength: a Close payload of one byte, too short for a status code (§5.5.1). Close
	// with CloseProtocolError.
	ErrCloseLength = errors.New("websocket: close payload of one byte")
	// ErrCloseCode: a Close status code that a peer may not send (§7.4.1, §7.4.2; see
	// ValidCloseCode). Close with CloseProtocolError.
	ErrCloseCode = errors.New("websocket: invalid close status code")
	// ErrCloseReason: a Close reason that is not UTF-8 (§5.5.1). Close with
	// CloseInvalidPayload, as for a Text message that is not (§8.1).
	ErrCloseReason = errors.New("websocket: close reason not valid UTF-8")
)
