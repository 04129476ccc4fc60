package frame

import (
	"bytes"
	"errors"
	"testing"
)

// The masking key of RFC 6455 §5.7's examples.
var rfcKey = [4]byte{0x37, 0xfa, 0x21, 0x3d}

func TestParse(t *testing.T) {
	tests := []struct {
		name string
		in   string
		n    int // the header's size; the rest of in is payload
		want Header
	}{
		// §5.7: "A single-frame unmasked text message".
		{"unmasked text", "\x81\x05Hello", 2, Header{Fin: true, Opcode: Text, Length: 5}},
		// §5.7: "A single-frame masked text message".
		{"masked text", "\x81\x85\x37\xfa\x21\x3d\x7f\x9f\x4d\x51\x58", 6, Header{Fin: true, Opcode: Text, Masked: true, Key: rfcKey, Length: 5}},
		// §5.7: "A fragmented unmasked text message": its two frames.
		{"first fragment", "\x01\x03Hel", 2, Header{Opcode: Text, Length: 3}},
		{"last fragment", "\x80\x02lo", 2, Header{Fin: true, Opcode: Continuation, Length: 2}},
		// §5.7: "Unmasked Ping request and masked Ping response".
		{"ping", "\x89\x05Hello", 2, Header{Fin: true, Opcode: Ping, Length: 5}},
		{"masked pong", "\x8a\x85\x37\xfa\x21\x3d\x7f\x9f\x4d\x51\x58", 6, Header{Fin: true, Opcode: Pong, Masked: true, Key: rfcKey, Length: 5}},
		// §5.7: "256 bytes binary message in a single unmasked frame": a 16-bit length.
		{"16-bit length", "\x82\x7e\x01\x00", 4, Header{Fin: true, Opcode: Binary, Length: 256}},
		// §5.7: "64KiB binary message in a single unmasked frame": a 64-bit length.
		{"64-bit length", "\x82\x7f\x00\x00\x00\x00\x00\x01\x00\x00", 10, Header{Fin: true, Opcode: Binary, Length: 65536}},
		{"largest 64-bit length", "\x82\x7f\x7f\xff\xff\xff\xff\xff\xff\xff", 10, Header{Fin: true, Opcode: Binary, Length: 1<<63 - 1}},
		{"largest 7-bit length", "\x82\x7d", 2, Header{Fin: true, Opcode: Binary, Length: 125}},
		{"empty close", "\x88\x00", 2, Header{Fin: true, Opcode: Close}},
		{"longest control frame", "\x89\x7d", 2, Header{Fin: true, Opcode: Ping, Length: 125}},
		// §5.2: "the minimal number of bytes MUST be used", not enforced (see Parse).
		{"non-minimal 16-bit length", "\x82\x7e\x00\x05", 4, Header{Fin: true, Opcode: Binary, Length: 5}},
		{"non-minimal 64-bit length", "\x82\x7f\x00\x00\x00\x00\x00\x00\x00\x05", 10, Header{Fin: true, Opcode: Binary, Length: 5}},
		{"control frame, non-minimal length", "\x89\x7e\x00\x7d", 4, Header{Fin: true, Opcode: Ping, Length: 125}},
		// §5.2: RSV bits are reported for the caller to judge (RFC 7692 §6 uses RSV1).
		{"RSV1", "\xc1\x00", 2, Header{Fin: true, RSV1: true, Opcode: Text}},
		{"RSV2 and RSV3", "\xb2\x00", 2, Header{Fin: true, RSV2: true, RSV3: true, Opcode: Binary}},
		{"every bit", "\xf0\xff\x7f\xff\xff\xff\xff\xff\xff\xff\x01\x02\x03\x04", 14, Header{Fin: true, RSV1: true, RSV2: true, RSV3: true, Opcode: Continuation, Masked: true, Key: [4]byte{1, 2, 3, 4}, Length: 1<<63 - 1}},
		{"trailing bytes", "\x82\x01xyz", 2, Header{Fin: true, Opcode: Binary, Length: 1}},
	}
	for _, tt := range tests {
		in := []byte(tt.in)
		h, n, err := Parse(in)
		if err != nil || n != tt.n || h != tt.want {
			t.Errorf("%s: Parse = %+v, %d, %v; want %+v, %d", tt.name, h, n, err, tt.want, tt.n)
		}
		// Every shorter prefix is incomplete: the caller waits for more.
		for i := range tt.n {
			if h, n, err := Parse(in[:i]); n != 0 || err != nil || h != (Header{}) {
				t.Errorf("%s: prefix of %d bytes: %+v, %d, %v", tt.name, i, h, n, err)
			}
		}
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want error
	}{
		// §5.2: opcodes 3-7 are "reserved for further non-control frames", 0xB-0xF "for further
		// control frames".
		{"opcode 3", "\x83\x00", ErrReservedOpcode},
		{"opcode 7", "\x87\x00", ErrReservedOpcode},
		{"opcode 0xB", "\x8b\x00", ErrReservedOpcode},
		{"opcode 0xF", "\x8f\x00", ErrReservedOpcode},
		{"reserved opcode, one byte", "\x05", ErrReservedOpcode},
		// §5.5: "All control frames MUST NOT be fragmented" (and §5.4).
		{"ping without FIN", "\x09\x00", ErrFragmentedControl},
		{"close without FIN", "\x08\x02\x03\xe8", ErrFragmentedControl},
		{"pong without FIN, one byte", "\x0a", ErrFragmentedControl},
		// §5.5: "All control frames MUST have a payload length of 125 bytes or less".
		{"ping of 126", "\x89\x7e\x00\x7e", ErrControlTooLong},
		{"close of 65535", "\x88\x7e\xff\xff", ErrControlTooLong},
		{"pong with 64-bit length", "\x8a\x7f\x00\x00\x00\x00\x00\x00\x01\x00", ErrControlTooLong},
		{"control too long, before the mask key", "\x89\xfe\x00\x7e", ErrControlTooLong},
		// §5.2: "the most significant bit MUST be 0" of a 64-bit length.
		{"64-bit length with MSB", "\x82\x7f\x80\x00\x00\x00\x00\x00\x00\x00", ErrLengthOverflow},
		{"all ones", "\x82\xff\xff\xff\xff\xff\xff\xff\xff\xff", ErrLengthOverflow},
	}
	for _, tt := range tests {
		h, n, err := Parse([]byte(tt.in))
		if !errors.Is(err, tt.want) || n != 0 || h != (Header{}) {
			t.Errorf("%s: Parse = %+v, %d, %v; want %v", tt.name, h, n, err, tt.want)
		}
		for i := range len(tt.in) {
			if _, n, err := Parse([]byte(tt.in[:i])); n != 0 || err != nil && err != tt.want {
				t.Errorf("%s: prefix of %d bytes: %d, %v", tt.name, i, n, err)
			}
		}
	}
	// Every opcode: six are valid (§5.2), the rest reserved.
	for op := range 16 {
		_, _, err := Parse([]byte{0x80 | byte(op), 0})
		if Opcode(op).Valid() != (err == nil) || err != nil && err != ErrReservedOpcode {
			t.Errorf("opcode %d: Valid %v, Parse err %v", op, Opcode(op).Valid(), err)
		}
	}
}

func TestOpcode(t *testing.T) {
	control := map[Opcode]bool{Close: true, Ping: true, Pong: true}
	for op := Opcode(0); op < 16; op++ {
		// §5.5: control frames are "identified by opcodes where the most significant bit of the
		// opcode is 1".
		if op.IsControl() != (op >= 8) {
			t.Errorf("%v: IsControl %v", op, op.IsControl())
		}
		if op.Valid() && op.IsControl() != control[op] {
			t.Errorf("%v: IsControl %v", op, op.IsControl())
		}
	}
	if Text.String() != "text" || Opcode(11).String() != "reserved opcode 11" {
		t.Errorf("String: %q, %q", Text.String(), Opcode(11).String())
	}
}

func TestAppendHeader(t *testing.T) {
	tests := []struct {
		h    Header
		want string
	}{
		// §5.7's examples, headers only.
		{Header{Fin: true, Opcode: Text, Length: 5}, "\x81\x05"},
		{Header{Fin: true, Opcode: Text, Masked: true, Key: rfcKey, Length: 5}, "\x81\x85\x37\xfa\x21\x3d"},
		{Header{Opcode: Text, Length: 3}, "\x01\x03"},
		{Header{Fin: true, Opcode: Pong, Masked: true, Key: rfcKey, Length: 5}, "\x8a\x85\x37\xfa\x21\x3d"},
		{Header{Fin: true, Opcode: Binary, Length: 256}, "\x82\x7e\x01\x00"},
		{Header{Fin: true, Opcode: Binary, Length: 65536}, "\x82\x7f\x00\x00\x00\x00\x00\x01\x00\x00"},
		// §5.2: the boundaries of the three length encodings.
		{Header{Fin: true, Opcode: Binary, Length: 0}, "\x82\x00"},
		{Header{Fin: true, Opcode: Binary, Length: 125}, "\x82\x7d"},
		{Header{Fin: true, Opcode: Binary, Length: 126}, "\x82\x7e\x00\x7e"},
		{Header{Fin: true, Opcode: Binary, Length: 65535}, "\x82\x7e\xff\xff"},
		{Header{Fin: true, Opcode: Binary, Length: 1<<63 - 1}, "\x82\x7f\x7f\xff\xff\xff\xff\xff\xff\xff"},
		{Header{Fin: true, RSV1: true, Opcode: Text, Length: 1}, "\xc1\x01"},
		{Header{RSV2: true, RSV3: true, Opcode: Continuation}, "\x30\x00"},
	}
	for _, tt := range tests {
		got := AppendHeader([]byte("x"), tt.h)
		if string(got) != "x"+tt.want {
			t.Errorf("AppendHeader(%+v) = %q, want %q", tt.h, got[1:], tt.want)
		}
		h, n, err := Parse(got[1:])
		if err != nil || n != len(tt.want) || h != tt.h {
			t.Errorf("%+v: parsed back as %+v, %d, %v", tt.h, h, n, err)
		}
		if len(tt.want) > MaxHeaderSize {
			t.Errorf("%+v: %d bytes, over MaxHeaderSize", tt.h, len(tt.want))
		}
	}
	if n := len(AppendHeader(nil, Header{Masked: true, Length: 1 << 20})); n != MaxHeaderSize {
		t.Errorf("longest header %d bytes, MaxHeaderSize %d", n, MaxHeaderSize)
	}
}

func TestAppendHeaderNegativeLength(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("no panic")
		}
	}()
	AppendHeader(nil, Header{Length: -1})
}

// TestParseFramesInSequence: Parse finds each header of a stream of frames, §5.7's fragmented
// message among them, when the caller skips each payload.
func TestParseFramesInSequence(t *testing.T) {
	stream := []byte("\x01\x03Hel\x89\x00\x80\x02lo\x81\x85\x37\xfa\x21\x3d\x7f\x9f\x4d\x51\x58")
	var msg []byte
	for len(stream) > 0 {
		h, n, err := Parse(stream)
		if err != nil || n == 0 {
			t.Fatalf("Parse(%q) = %d, %v", stream, n, err)
		}
		payload := stream[n : n+int(h.Length)]
		if h.Masked {
			Mask(h.Key, 0, payload)
		}
		if !h.Opcode.IsControl() {
			msg = append(msg, payload...)
		}
		stream = stream[n+int(h.Length):]
	}
	if !bytes.Equal(msg, []byte("HelloHello")) {
		t.Errorf("payloads %q", msg)
	}
}
