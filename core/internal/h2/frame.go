package h2

// ClientPreface is what every HTTP/2 connection begins with from the client (RFC 9113 §3.4),
// before its SETTINGS frame. Its first line is a request line no HTTP/1.1 server accepts, so a
// server tells h2c with prior knowledge from HTTP/1.1 by it.
const ClientPreface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"

// HeaderLen is the length of a frame header (RFC 9113 §4.1).
const HeaderLen = 9

// The bounds of SETTINGS_MAX_FRAME_SIZE (RFC 9113 §6.5.2): every endpoint accepts frames of
// MinMaxFrameSize bytes of payload until it says otherwise.
const (
	MinMaxFrameSize = 1 << 14
	MaxMaxFrameSize = 1<<24 - 1
)

// MaxWindow is the largest flow-control window (RFC 9113 §6.9.1).
const MaxWindow = 1<<31 - 1

// A Type is a frame type (RFC 9113 §6).
type Type uint8

// The frame types of RFC 9113 §6.
const (
	TypeData         Type = 0x0
	TypeHeaders      Type = 0x1
	TypePriority     Type = 0x2
	TypeRSTStream    Type = 0x3
	TypeSettings     Type = 0x4
	TypePushPromise  Type = 0x5
	TypePing         Type = 0x6
	TypeGoAway       Type = 0x7
	TypeWindowUpdate Type = 0x8
	TypeContinuation Type = 0x9
)

var typeNames = [...]string{"DATA", "HEADERS", "PRIORITY", "RST_STREAM", "SETTINGS", "PUSH_PROMISE",
	"PING", "GOAWAY", "WINDOW_UPDATE", "CONTINUATION"}

// String returns the type's name in RFC 9113, or "UNKNOWN" for a type it does not define (which
// a receiver ignores: §4.1).
func (t Type) String() string {
	if int(t) < len(typeNames) {
		return typeNames[t]
	}
	return "UNKNOWN"
}

// Flags are a frame's flags; which bits mean what depends on its type.
type Flags uint8

// The flags of RFC 9113 §6.
const (
	FlagEndStream  Flags = 0x1  // DATA, HEADERS: the last frame the sender sends on the stream
	FlagAck        Flags = 0x1  // SETTINGS, PING: the answer to the peer's
	FlagEndHeaders Flags = 0x4  // HEADERS, PUSH_PROMISE, CONTINUATION: the field block ends here
	FlagPadded     Flags = 0x8  // DATA, HEADERS, PUSH_PROMISE: a pad length and padding surround the payload
	FlagPriority   Flags = 0x20 // HEADERS: a priority (deprecated, §5.3.2) precedes the field block
)

// Has reports whether every flag of f is set.
func (fl Flags) Has(f Flags) bool { return fl&f == f }

// A Header is a frame header (RFC 9113 §4.1).
type Header struct {
	Length   uint32 // of the payload: 24 bits
	Type     Type
	Flags    Flags
	StreamID uint32 // 31 bits: the reserved bit is dropped when read and sent as 0
}

// ParseHeader reads a frame header from the first HeaderLen bytes of b, which must hold them.
func ParseHeader(b []byte) Header {
	_ = b[HeaderLen-1]
	return Header{
		Length:   uint32(b[0])<<16 | uint32(b[1])<<8 | uint32(b[2]),
		Type:     Type(b[3]),
		Flags:    Flags(b[4]),
		StreamID: be32(b[5:]) & (1<<31 - 1),
	}
}

// AppendHeader appends h to dst.
func AppendHeader(dst []byte, h Header) []byte {
	return append(dst, byte(h.Length>>16), byte(h.Length>>8), byte(h.Length), byte(h.Type), byte(h.Flags),
		byte(h.StreamID>>24)&0x7f, byte(h.StreamID>>16), byte(h.StreamID>>8), byte(h.StreamID))
}

// Check applies what RFC 9113 says of a frame's header alone, for a server receiving it: the
// length within maxFrameSize (the server's SETTINGS_MAX_FRAME_SIZE) and the frame type's
// fixed length, and the stream identifier zero or not as the type requires. A PUSH_PROMISE is
// refused outright: a client cannot push (§8.4). An unknown type passes: it is ignored. Every
// error it returns is a *ConnError, so that the frames behind one are never read: a wrong
// length that is only the stream's error (PRIORITY's, §6.3) is PriorityFrame's to report, once
// the frame has arrived whole and can be skipped.
func (h Header) Check(maxFrameSize uint32) error {
	if h.Length > maxFrameSize {
		return connErr(FrameSizeError, h.Type.String()+" frame larger than SETTINGS_MAX_FRAME_SIZE")
	}
	onStream := h.StreamID != 0
	switch h.Type {
	case TypeData, TypeHeaders, TypeContinuation:
		if !onStream {
			return connErr(ProtocolError, h.Type.String()+" frame on stream 0")
		}
	case TypePriority:
		if !onStream {
			return connErr(ProtocolError, "PRIORITY frame on stream 0")
		}
	case TypeRSTStream:
		if !onStream {
			return connErr(ProtocolError, "RST_STREAM frame on stream 0")
		}
		if h.Length != 4 {
			return connErr(FrameSizeError, "RST_STREAM frame not 4 bytes long")
		}
	case TypeSettings:
		switch {
		case onStream:
			return connErr(ProtocolError, "SETTINGS frame on a stream")
		case h.Flags.Has(FlagAck) && h.Length != 0:
			return connErr(FrameSizeError, "SETTINGS acknowledgement with a payload")
		case h.Length%6 != 0:
			return connErr(FrameSizeError, "SETTINGS frame not a multiple of 6 bytes long")
		}
	case TypePushPromise:
		return connErr(ProtocolError, "PUSH_PROMISE from a client")
	case TypePing:
		if onStream {
			return connErr(ProtocolError, "PING frame on a stream")
		}
		if h.Length != 8 {
			return connErr(FrameSizeError, "PING frame not 8 bytes long")
		}
	case TypeGoAway:
		if onStream {
			return connErr(ProtocolError, "GOAWAY frame on a stream")
		}
		if h.Length < 8 {
			return connErr(FrameSizeError, "GOAWAY frame shorter than 8 bytes")
		}
	case TypeWindowUpdate:
		if h.Length != 4 {
			return connErr(FrameSizeError, "WINDOW_UPDATE frame not 4 bytes long")
		}
	}
	return nil
}

func be32(b []byte) uint32 {
	_ = b[3]
	return uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
}

func appendBE32(dst []byte, v uint32) []byte {
	return append(dst, byte(v>>24), byte(v>>16), byte(v>>8), byte(v))
}
