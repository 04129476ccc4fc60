package h2

// The payload parsers take a frame's header, already Checked, and its whole payload (h.Length
// bytes); what they return points into the payload.

// unpad returns the payload of a frame with FlagPadded without its pad length and padding: a
// padding as long as the payload or longer is a connection error (RFC 9113 §6.1, §6.2).
func unpad(h Header, p []byte) ([]byte, error) {
	if !h.Flags.Has(FlagPadded) {
		return p, nil
	}
	if len(p) == 0 {
		return nil, connErr(ProtocolError, h.Type.String()+" frame padded with no pad length")
	}
	pad := int(p[0])
	if pad >= len(p) {
		return nil, connErr(ProtocolError, h.Type.String()+" frame padding as long as its payload")
	}
	return p[1 : len(p)-pad], nil
}

// Data returns a DATA frame's data (RFC 9113 §6.1). Flow control counts the whole payload,
// padding included (h.Length), not only the data.
func Data(h Header, p []byte) ([]byte, error) { return unpad(h, p) }

// A Priority is the dependency and weight a HEADERS or PRIORITY frame carries (RFC 9113 §5.3.2,
// §6.3): deprecated signalling, read only to check it.
type Priority struct {
	Exclusive bool
	DependsOn uint32
	Weight    uint8 // the weight less one, as sent
}

func parsePriority(id uint32, b []byte) (Priority, error) {
	v := be32(b)
	pr := Priority{Exclusive: v>>31 == 1, DependsOn: v & (1<<31 - 1), Weight: b[4]}
	if pr.DependsOn == id {
		return pr, streamErr(id, ProtocolError, "stream depends on itself")
	}
	return pr, nil
}

// Headers returns a HEADERS frame's field block fragment (RFC 9113 §6.2), and its priority when
// FlagPriority is set. A stream that depends on itself is an error of the stream alone
// (*StreamError), which comes with the fragment all the same: the block must still be decoded,
// or the HPACK table the client's encoder keeps would no longer be the server's.
func Headers(h Header, p []byte) (block []byte, pr Priority, err error) {
	if p, err = unpad(h, p); err != nil {
		return nil, pr, err
	}
	if h.Flags.Has(FlagPriority) {
		if len(p) < 5 {
			return nil, pr, connErr(FrameSizeError, "HEADERS frame too short for its priority")
		}
		pr, err = parsePriority(h.StreamID, p[:5])
		p = p[5:]
	}
	return p, pr, err
}

// PriorityFrame returns a PRIORITY frame's priority (RFC 9113 §6.3). One not 5 bytes long is an
// error of its stream alone.
func PriorityFrame(h Header, p []byte) (Priority, error) {
	if len(p) != 5 {
		return Priority{}, streamErr(h.StreamID, FrameSizeError, "PRIORITY frame not 5 bytes long")
	}
	return parsePriority(h.StreamID, p)
}

// RSTStream returns an RST_STREAM frame's error code (RFC 9113 §6.4).
func RSTStream(p []byte) ErrCode { return ErrCode(be32(p)) }

// Ping returns a PING frame's opaque data (RFC 9113 §6.7), which its answer carries back.
func Ping(p []byte) [8]byte { return [8]byte(p[:8]) }

// GoAway returns a GOAWAY frame's last stream identifier, error code and debug data (RFC 9113
// §6.8).
func GoAway(p []byte) (last uint32, code ErrCode, debug []byte) {
	return be32(p) & (1<<31 - 1), ErrCode(be32(p[4:])), p[8:]
}

// WindowUpdate returns a WINDOW_UPDATE frame's increment (RFC 9113 §6.9): one of 0 is an error
// of the stream, or of the connection when the frame is the connection's.
func WindowUpdate(h Header, p []byte) (uint32, error) {
	inc := be32(p) & (1<<31 - 1)
	if inc == 0 {
		if h.StreamID == 0 {
			return 0, connErr(ProtocolError, "WINDOW_UPDATE of 0 for the connection")
		}
		return 0, streamErr(h.StreamID, ProtocolError, "WINDOW_UPDATE of 0")
	}
	return inc, nil
}
