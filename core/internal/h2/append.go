package h2

// The frames a server sends, appended to a buffer.

// AppendData appends a DATA frame of data on stream id, which must fit the peer's maximum frame
// size; endStream ends the stream.
func AppendData(dst []byte, id uint32, endStream bool, data []byte) []byte {
	var fl Flags
	if endStream {
		fl = FlagEndStream
	}
	dst = AppendHeader(dst, Header{Length: uint32(len(data)), Type: TypeData, Flags: fl, StreamID: id})
	return append(dst, data...)
}

// AppendHeaders appends a field block on stream id: a HEADERS frame, followed by as many
// CONTINUATION frames as the block needs at maxFrameSize bytes a frame, the last with
// FlagEndHeaders. endStream sets FlagEndStream on the HEADERS frame.
func AppendHeaders(dst []byte, id uint32, endStream bool, block []byte, maxFrameSize int) []byte {
	typ, fl := TypeHeaders, Flags(0)
	if endStream {
		fl = FlagEndStream
	}
	for {
		n := min(len(block), maxFrameSize)
		if n == len(block) {
			fl |= FlagEndHeaders
		}
		dst = AppendHeader(dst, Header{Length: uint32(n), Type: typ, Flags: fl, StreamID: id})
		dst = append(dst, block[:n]...)
		block = block[n:]
		if len(block) == 0 {
			return dst
		}
		typ, fl = TypeContinuation, 0
	}
}

// AppendSettings appends a SETTINGS frame with settings.
func AppendSettings(dst []byte, settings ...Setting) []byte {
	dst = AppendHeader(dst, Header{Length: uint32(6 * len(settings)), Type: TypeSettings})
	for _, s := range settings {
		dst = append(dst, byte(s.ID>>8), byte(s.ID))
		dst = appendBE32(dst, s.Value)
	}
	return dst
}

// AppendSettingsAck appends the acknowledgement of the peer's SETTINGS frame.
func AppendSettingsAck(dst []byte) []byte {
	return AppendHeader(dst, Header{Type: TypeSettings, Flags: FlagAck})
}

// AppendPing appends a PING frame with data; ack makes it the answer to the peer's.
func AppendPing(dst []byte, ack bool, data [8]byte) []byte {
	var fl Flags
	if ack {
		fl = FlagAck
	}
	dst = AppendHeader(dst, Header{Length: 8, Type: TypePing, Flags: fl})
	return append(dst, data[:]...)
}

// AppendGoAway appends a GOAWAY frame: the last stream the server acts on, why, and debug data.
func AppendGoAway(dst []byte, last uint32, code ErrCode, debug []byte) []byte {
	dst = AppendHeader(dst, Header{Length: uint32(8 + len(debug)), Type: TypeGoAway})
	dst = appendBE32(dst, last&(1<<31-1))
	dst = appendBE32(dst, uint32(code))
	return append(dst, debug...)
}

// AppendRSTStream appends an RST_STREAM frame ending stream id with code.
func AppendRSTStream(dst []byte, id uint32, code ErrCode) []byte {
	dst = AppendHeader(dst, Header{Length: 4, Type: TypeRSTStream, StreamID: id})
	return appendBE32(dst, uint32(code))
}

// AppendWindowUpdate appends a WINDOW_UPDATE frame granting inc more bytes on stream id (0: on
// the connection).
func AppendWindowUpdate(dst []byte, id, inc uint32) []byte {
	dst = AppendHeader(dst, Header{Length: 4, Type: TypeWindowUpdate, StreamID: id})
	return appendBE32(dst, inc&(1<<31-1))
}
