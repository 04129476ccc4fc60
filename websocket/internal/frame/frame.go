package frame

import (
	"encoding/binary"
	"strconv"
)

// Opcode is a frame's opcode (RFC 6455 §5.2, §11.8): the type of a data frame's message, or
// which control frame it is.
type Opcode uint8

// The opcodes RFC 6455 defines (§5.2). Every other value is reserved.
const (
	Continuation Opcode = 0  // a later fragment of a Text or Binary message (§5.4)
	Text         Opcode = 1  // a message of UTF-8 text (§5.6)
	Binary       Opcode = 2  // a message of arbitrary bytes (§5.6)
	Close        Opcode = 8  // the closing handshake (§5.5.1)
	Ping         Opcode = 9  // asks for a Pong (§5.5.2)
	Pong         Opcode = 10 // answers a Ping, or is a unidirectional heartbeat (§5.5.3)
)

// IsControl reports whether o is a control opcode (§5.5): those have the high bit of the
// opcode set, and follow stricter rules (no fragmentation, at most 125 bytes), reserved ones
// included.
func (o Opcode) IsControl() bool { return o&8 != 0 }

// Valid reports whether o is one of the six opcodes RFC 6455 defines; the others are reserved
// (§5.2) and a frame carrying one fails the connection.
func (o Opcode) Valid() bool {
	switch o {
	case Continuation, Text, Binary, Close, Ping, Pong:
		return true
	}
	return false
}

// String returns the opcode's name, for logs and test failures.
func (o Opcode) String() string {
	switch o {
	case Continuation:
		return "continuation"
	case Text:
		return "text"
	case Binary:
		return "binary"
	case Close:
		return "close"
	case Ping:
		return "ping"
	case Pong:
		return "pong"
	}
	return "reserved opcode " + strconv.Itoa(int(o))
}

// MaxControlPayload is the longest payload a control frame may carry (§5.5).
const MaxControlPayload = 125

// MaxHeaderSize is the longest frame header: 2 bytes, a 64-bit extended length and a masking
// key (§5.2). A buffer this long always holds a whole header.
const MaxHeaderSize = 2 + 8 + 4

// Header is a frame header (§5.2) as it is on the wire, bits the caller must judge included.
type Header struct {
	Fin bool // the final fragment of a message (§5.4); a control frame always has it
	// RSV1, RSV2 and RSV3 must be 0 unless an extension gives them a meaning (§5.2):
	// permessage-deflate sets RSV1 on a compressed message's first frame (RFC 7692 §6).
	RSV1, RSV2, RSV3 bool
	Opcode           Opcode
	Masked           bool    // a client's frames are masked, a server's are not (§5.1, §5.3)
	Key              [4]byte // the masking key when Masked, for Mask
	Length           int64   // the payload length: never negative
}

// Parse parses the frame header at the start of b. It returns the header and its size n; n is
// 0 and err nil when b does not hold the whole header yet, and the caller waits for more bytes
// (at most MaxHeaderSize in all). An error is returned as soon as the bytes that decide it are
// in b, before the rest of the header has arrived; on an error h is the zero Header.
//
// Parse enforces what RFC 6455 forbids whatever was negotiated. The RSV bits and masking are
// reported, not judged: only the caller knows whether an extension gives an RSV bit a meaning
// and which side it is. A length in a longer encoding than needed (5 in 16 bits, say) is
// accepted: §5.2 says "the minimal number of bytes MUST be used to encode the length", but it
// costs nothing to read and other implementations accept it, so refusing it would only break
// peers that work elsewhere.
func Parse(b []byte) (h Header, n int, err error) {
	if len(b) == 0 {
		return Header{}, 0, nil
	}
	h.Fin = b[0]&0x80 != 0
	h.RSV1 = b[0]&0x40 != 0
	h.RSV2 = b[0]&0x20 != 0
	h.RSV3 = b[0]&0x10 != 0
	h.Opcode = Opcode(b[0] & 0x0f)
	if !h.Opcode.Valid() {
		return Header{}, 0, ErrReservedOpcode // §5.2: 3-7 and 0xB-0xF are reserved
	}
	if h.Opcode.IsControl() && !h.Fin {
		return Header{}, 0, ErrFragmentedControl // §5.5: control frames MUST NOT be fragmented
	}
	if len(b) < 2 {
		return Header{}, 0, nil
	}
	h.Masked = b[1]&0x80 != 0
	switch l := b[1] & 0x7f; l {
	case 126: // §5.2: a 16-bit length follows
		if len(b) < 4 {
			return Header{}, 0, nil
		}
		h.Length = int64(binary.BigEndian.Uint16(b[2:]))
		n = 4
	case 127: // §5.2: a 64-bit length follows
		if len(b) < 10 {
			return Header{}, 0, nil
		}
		u := binary.BigEndian.Uint64(b[2:])
		if u>>63 != 0 {
			return Header{}, 0, ErrLengthOverflow // §5.2: "the most significant bit MUST be 0"
		}
		h.Length = int64(u)
		n = 10
	default:
		h.Length = int64(l)
		n = 2
	}
	if h.Opcode.IsControl() && h.Length > MaxControlPayload {
		return Header{}, 0, ErrControlTooLong // §5.5: 125 bytes or less
	}
	if h.Masked {
		if len(b) < n+4 {
			return Header{}, 0, nil
		}
		copy(h.Key[:], b[n:n+4])
		n += 4
	}
	return h, n, nil
}

// AppendHeader appends h to dst in its shortest encoding (§5.2: a 7-bit length up to 125, a
// 16-bit one up to 65535, a 64-bit one beyond), with the masking key when h.Masked, and returns
// the extended slice. Only the low 4 bits of h.Opcode are written. It writes what it is given:
// keeping control frames short and final is the caller's part. A negative h.Length panics.
func AppendHeader(dst []byte, h Header) []byte {
	b0 := byte(h.Opcode & 0x0f)
	if h.Fin {
		b0 |= 0x80
	}
	if h.RSV1 {
		b0 |= 0x40
	}
	if h.RSV2 {
		b0 |= 0x20
	}
	if h.RSV3 {
		b0 |= 0x10
	}
	var b1 byte
	if h.Masked {
		b1 = 0x80
	}
	switch {
	case h.Length < 0:
		panic("frame: negative payload length")
	case h.Length <= 125:
		dst = append(dst, b0, b1|byte(h.Length))
	case h.Length <= 0xffff:
		dst = append(dst, b0, b1|126)
		dst = binary.BigEndian.AppendUint16(dst, uint16(h.Length))
	default:
		dst = append(dst, b0, b1|127)
		dst = binary.BigEndian.AppendUint64(dst, uint64(h.Length))
	}
	if h.Masked {
		dst = append(dst, h.Key[:]...)
	}
	return dst
}
