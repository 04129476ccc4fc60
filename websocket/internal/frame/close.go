package frame

import (
	"encoding/binary"
	"unicode/utf8"
)

// Close status codes (RFC 6455 §7.4.1, and 1012-1013 from the IANA registry of §11.7).
// CloseNoStatus and CloseAbnormal are never on the wire: they are what an endpoint reports
// when a Close frame had no code, or when the connection ended with no Close frame at all.
const (
	CloseNormal             uint16 = 1000 // the purpose of the connection is fulfilled
	CloseGoingAway          uint16 = 1001 // a server going down, a browser leaving the page
	CloseProtocolError      uint16 = 1002 // the peer broke the protocol
	CloseUnsupportedData    uint16 = 1003 // a message of a type the endpoint cannot take
	CloseNoStatus           uint16 = 1005 // reserved: a Close frame with no status code
	CloseAbnormal           uint16 = 1006 // reserved: the connection ended without a Close frame
	CloseInvalidPayload     uint16 = 1007 // data inconsistent with the message type (non-UTF-8 text)
	ClosePolicyViolation    uint16 = 1008 // a message that violates the endpoint's policy
	CloseMessageTooBig      uint16 = 1009 // a message too big to process
	CloseMandatoryExtension uint16 = 1010 // a client that needed an extension the server declined
	CloseInternalError      uint16 = 1011 // a server that met an unexpected condition
	CloseServiceRestart     uint16 = 1012 // a server restarting
	CloseTryAgainLater      uint16 = 1013 // a server overloaded for now
)

// ValidCloseCode reports whether a peer may send code in a Close frame: those §7.4.1 defines
// for a Close frame (1000-1003, 1007-1011), 1012, 1013 and 1014 (registered since in IANA's
// registry, §11.7), and 3000-4999 (for libraries, frameworks and applications, §7.4.2). 1004,
// 1005, 1006 and 1015 are reserved, never sent, and the rest of 1000-2999 is unassigned: both
// are refused, as Autobahn's testsuite asks. An endpoint sends only codes for which this is
// true.
func ValidCloseCode(code uint16) bool {
	switch {
	case code >= 1000 && code <= 1003, code >= 1007 && code <= 1014:
		return true
	case code >= 3000 && code <= 4999:
		return true
	}
	return false
}

// ParseClose parses the payload of a Close frame (§5.5.1): an empty payload, or a 2-byte status
// code followed by a UTF-8 reason. A code of 0 means that none was given (an empty payload);
// the caller then reports CloseNoStatus and answers with a Close frame of its own, which may
// itself be empty. reason is borrowed from payload: it is valid only as long as payload is.
// The payload's length is Parse's to check (at most 125 bytes for every control frame).
func ParseClose(payload []byte) (code uint16, reason []byte, err error) {
	switch len(payload) {
	case 0:
		return 0, nil, nil // §5.5.1: "The Close frame MAY contain a body"
	case 1:
		return 0, nil, ErrCloseLength // §5.5.1: a body starts with a 2-byte code
	}
	code = binary.BigEndian.Uint16(payload)
	if !ValidCloseCode(code) {
		return 0, nil, ErrCloseCode // §7.4.1, §7.4.2
	}
	reason = payload[2:]
	if !utf8.Valid(reason) {
		return 0, nil, ErrCloseReason // §5.5.1: the reason is UTF-8
	}
	return code, reason, nil
}

// AppendClose appends the payload of a Close frame with code and reason to dst and returns the
// extended slice. A code of 0 or CloseNoStatus appends nothing, the empty payload that says "no
// status" (1005 itself MUST NOT be sent, §7.4.1), and the reason with it, since a reason cannot
// go without a code. A reason that would take the payload past MaxControlPayload is cut, on a
// UTF-8 character boundary so that the peer does not fail the connection over it. reason should
// be UTF-8, and code one for which ValidCloseCode is true: AppendClose writes what it is given.
func AppendClose(dst []byte, code uint16, reason string) []byte {
	if code == 0 || code == CloseNoStatus {
		return dst
	}
	dst = binary.BigEndian.AppendUint16(dst, code)
	if room := MaxControlPayload - 2; len(reason) > room {
		i := room
		for i > 0 && reason[i]&0xc0 == 0x80 { // back up to the start of the character cut
			i--
		}
		reason = reason[:i]
	}
	return append(dst, reason...)
}
