package h2

import (
	"bytes"
	"errors"
	"slices"
	"testing"
)

func TestHeaderRoundTrip(t *testing.T) {
	b := []byte{0x01, 0x02, 0x03, byte(TypeHeaders), byte(FlagEndHeaders | FlagEndStream), 0xff, 0, 0, 5}
	h := ParseHeader(b)
	want := Header{Length: 0x010203, Type: TypeHeaders, Flags: FlagEndHeaders | FlagEndStream, StreamID: 0x7f000005}
	if h != want {
		t.Fatalf("ParseHeader: %+v, want %+v (the reserved bit dropped)", h, want)
	}
	b[5] &= 0x7f // sent as 0
	if got := AppendHeader(nil, h); !bytes.Equal(got, b) {
		t.Fatalf("AppendHeader: % x, want % x", got, b)
	}
}

// TestCheck: what RFC 9113 §6 says of each frame type's header, for a server receiving it.
func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		name string
		h    Header
		code ErrCode
	}{
		{"DATA on a stream", Header{Type: TypeData, StreamID: 1, Length: 10}, NoError},
		{"DATA on stream 0", Header{Type: TypeData}, ProtocolError},
		{"DATA over the frame size", Header{Type: TypeData, StreamID: 1, Length: MinMaxFrameSize + 1}, FrameSizeError},
		{"HEADERS on stream 0", Header{Type: TypeHeaders}, ProtocolError},
		{"CONTINUATION on stream 0", Header{Type: TypeContinuation}, ProtocolError},
		{"PRIORITY on stream 0", Header{Type: TypePriority, Length: 5}, ProtocolError},
		{"PRIORITY of 6 bytes: PriorityFrame's stream error", Header{Type: TypePriority, StreamID: 3, Length: 6}, NoError},
		{"RST_STREAM on stream 0", Header{Type: TypeRSTStream, Length: 4}, ProtocolError},
		{"RST_STREAM of 3 bytes", Header{Type: TypeRSTStream, StreamID: 1, Length: 3}, FrameSizeError},
		{"SETTINGS on a stream", Header{Type: TypeSettings, StreamID: 1}, ProtocolError},
		{"SETTINGS ack with a payload", Header{Type: TypeSettings, Flags: FlagAck, Length: 6}, FrameSizeError},
		{"SETTINGS of 7 bytes", Header{Type: TypeSettings, Length: 7}, FrameSizeError},
		{"SETTINGS of 12 bytes", Header{Type: TypeSettings, Length: 12}, NoError},
		{"PUSH_PROMISE", Header{Type: TypePushPromise, StreamID: 1, Length: 4}, ProtocolError},
		{"PING on a stream", Header{Type: TypePing, StreamID: 1, Length: 8}, ProtocolError},
		{"PING of 7 bytes", Header{Type: TypePing, Length: 7}, FrameSizeError},
		{"GOAWAY on a stream", Header{Type: TypeGoAway, StreamID: 1, Length: 8}, ProtocolError},
		{"GOAWAY of 7 bytes", Header{Type: TypeGoAway, Length: 7}, FrameSizeError},
		{"WINDOW_UPDATE of 5 bytes", Header{Type: TypeWindowUpdate, StreamID: 1, Length: 5}, FrameSizeError},
		{"WINDOW_UPDATE on stream 0", Header{Type: TypeWindowUpdate, Length: 4}, NoError},
		{"an unknown type", Header{Type: 0x20, StreamID: 7, Length: 100}, NoError},
	} {
		err := tc.h.Check(MinMaxFrameSize)
		var ce *ConnError
		switch {
		case tc.code == NoError:
			if err != nil {
				t.Errorf("%s: %v, want nil", tc.name, err)
			}
		default:
			if !errors.As(err, &ce) || ce.Code != tc.code {
				t.Errorf("%s: %v, want a connection error %v", tc.name, err, tc.code)
			}
		}
	}
}

func TestPayloads(t *testing.T) {
	// DATA, padded: pad length 2, "hi", two bytes of padding.
	d, err := Data(Header{Type: TypeData, Flags: FlagPadded, StreamID: 1, Length: 5}, []byte{2, 'h', 'i', 0, 0})
	if err != nil || string(d) != "hi" {
		t.Errorf("padded DATA: %q, %v", d, err)
	}
	var ce *ConnError
	if _, err := Data(Header{Type: TypeData, Flags: FlagPadded, StreamID: 1, Length: 3}, []byte{3, 0, 0}); !errors.As(err, &ce) || ce.Code != ProtocolError {
		t.Errorf("padding as long as the payload: %v, want PROTOCOL_ERROR", err)
	}
	// HEADERS with a priority on stream 3 that depends on itself: the stream's error, and the
	// fragment, which must still be decoded.
	block, pr, err := Headers(Header{Type: TypeHeaders, Flags: FlagPriority, StreamID: 3, Length: 6}, []byte{0, 0, 0, 3, 15, 0x82})
	var se *StreamError
	if !errors.As(err, &se) || se.Code != ProtocolError || se.StreamID != 3 || !bytes.Equal(block, []byte{0x82}) || pr.DependsOn != 3 {
		t.Errorf("self-dependent HEADERS: % x, %+v, %v; want 82 and a stream PROTOCOL_ERROR", block, pr, err)
	}
	// PRIORITY of the wrong length: the stream's error alone (RFC 9113 §6.3).
	for _, p := range [][]byte{{0, 0, 0, 1}, {0, 0, 0, 1, 15, 0}} {
		h := Header{Type: TypePriority, StreamID: 3, Length: uint32(len(p))}
		if _, err := PriorityFrame(h, p); !errors.As(err, &se) || se.Code != FrameSizeError || se.StreamID != 3 {
			t.Errorf("PRIORITY of %d bytes: %v, want a stream FRAME_SIZE_ERROR", len(p), err)
		}
	}
	block, pr, err = Headers(Header{Type: TypeHeaders, Flags: FlagPriority | FlagPadded, StreamID: 3, Length: 8}, []byte{1, 0x80, 0, 0, 1, 15, 0x82, 0})
	if err != nil || !bytes.Equal(block, []byte{0x82}) || pr != (Priority{Exclusive: true, DependsOn: 1, Weight: 15}) {
		t.Errorf("padded HEADERS with a priority: % x %+v %v", block, pr, err)
	}
	if _, err := WindowUpdate(Header{Type: TypeWindowUpdate, StreamID: 5, Length: 4}, []byte{0, 0, 0, 0}); !errors.As(err, &se) || se.StreamID != 5 {
		t.Errorf("WINDOW_UPDATE of 0 on a stream: %v, want a stream error", err)
	}
	if _, err := WindowUpdate(Header{Type: TypeWindowUpdate, Length: 4}, []byte{0, 0, 0, 0}); !errors.As(err, &ce) {
		t.Errorf("WINDOW_UPDATE of 0 on the connection: %v, want a connection error", err)
	}
	if inc, err := WindowUpdate(Header{Type: TypeWindowUpdate, Length: 4}, []byte{0x80, 0, 1, 0}); inc != 256 || err != nil {
		t.Errorf("WINDOW_UPDATE with the reserved bit: %d, %v; want 256", inc, err)
	}
	last, code, debug := GoAway([]byte{0x80, 0, 0, 9, 0, 0, 0, 0xb, 'c', 'a', 'l', 'm'})
	if last != 9 || code != EnhanceYourCalm || string(debug) != "calm" {
		t.Errorf("GOAWAY: %d %v %q", last, code, debug)
	}
}

func TestSettings(t *testing.T) {
	p := AppendSettings(nil, Setting{SettingMaxConcurrentStreams, 100}, Setting{SettingInitialWindowSize, 1 << 20}, Setting{0x99, 7})[HeaderLen:]
	var got []Setting
	if err := Settings(p, func(s Setting) error { got = append(got, s); return nil }); err != nil || len(got) != 3 || got[1].Value != 1<<20 || got[2].ID != 0x99 {
		t.Fatalf("Settings: %v, %v", got, err)
	}
	for _, tc := range []struct {
		s    Setting
		code ErrCode
	}{
		{Setting{SettingEnablePush, 2}, ProtocolError},
		{Setting{SettingEnableConnectProtocol, 2}, ProtocolError},
		{Setting{SettingInitialWindowSize, MaxWindow + 1}, FlowControlError},
		{Setting{SettingMaxFrameSize, MinMaxFrameSize - 1}, ProtocolError},
		{Setting{SettingMaxFrameSize, MaxMaxFrameSize + 1}, ProtocolError},
		{Setting{SettingMaxFrameSize, MaxMaxFrameSize}, NoError},
		{Setting{SettingInitialWindowSize, MaxWindow}, NoError},
	} {
		err := Settings(AppendSettings(nil, tc.s)[HeaderLen:], func(Setting) error { return nil })
		var ce *ConnError
		if tc.code == NoError && err != nil || tc.code != NoError && (!errors.As(err, &ce) || ce.Code != tc.code) {
			t.Errorf("%+v: %v, want %v", tc.s, err, tc.code)
		}
	}
}

// TestAppendHeadersSplits: a field block larger than the frame size goes out as HEADERS and
// CONTINUATION frames, END_HEADERS on the last alone, END_STREAM on the first alone.
func TestAppendHeadersSplits(t *testing.T) {
	block := bytes.Repeat([]byte{0x82}, 25)
	b := AppendHeaders(nil, 7, true, block, 10)
	var got []byte
	var types []Type
	var flags []Flags
	for len(b) > 0 {
		h := ParseHeader(b)
		if h.StreamID != 7 {
			t.Fatalf("a frame on stream %d", h.StreamID)
		}
		types, flags = append(types, h.Type), append(flags, h.Flags)
		got = append(got, b[HeaderLen:HeaderLen+h.Length]...)
		b = b[HeaderLen+h.Length:]
	}
	wantTypes := []Type{TypeHeaders, TypeContinuation, TypeContinuation}
	wantFlags := []Flags{FlagEndStream, 0, FlagEndHeaders}
	if !bytes.Equal(got, block) || !slices.Equal(types, wantTypes) || !slices.Equal(flags, wantFlags) {
		t.Fatalf("frames %v with flags %v carrying % x", types, flags, got)
	}
}
