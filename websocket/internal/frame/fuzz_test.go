package frame

import (
	"bytes"
	"errors"
	"testing"
	"unicode/utf8"
)

// FuzzParse: Parse never panics, never claims more bytes than it was given, decides the same on
// every prefix (incomplete, or the same error), and a header it accepts is re-encoded by
// AppendHeader into bytes that parse back equal, identical when the encoding was minimal.
func FuzzParse(f *testing.F) {
	f.Add([]byte("\x81\x85\x37\xfa\x21\x3d\x7f\x9f\x4d\x51\x58"))
	f.Add([]byte("\x82\x7f\x00\x00\x00\x00\x00\x01\x00\x00"))
	f.Add([]byte("\x89\x7e\x00\x7e"))
	f.Fuzz(func(t *testing.T, b []byte) {
		h, n, err := Parse(b)
		if n < 0 || n > len(b) || n > MaxHeaderSize {
			t.Fatalf("n = %d of %d bytes", n, len(b))
		}
		for i := range len(b) {
			hi, ni, erri := Parse(b[:i])
			if err == nil && n > 0 && i >= n {
				if erri != nil || ni != n || hi != h {
					t.Fatalf("prefix of %d bytes: %+v, %d, %v; whole: %+v, %d", i, hi, ni, erri, h, n)
				}
			} else if ni != 0 || erri != nil && erri != err {
				t.Fatalf("prefix of %d bytes: %d, %v; whole: %d, %v", i, ni, erri, n, err)
			}
		}
		if err != nil {
			if !errors.Is(err, ErrReservedOpcode) && !errors.Is(err, ErrFragmentedControl) &&
				!errors.Is(err, ErrControlTooLong) && !errors.Is(err, ErrLengthOverflow) {
				t.Fatalf("unexpected error %v", err)
			}
			return
		}
		if n == 0 {
			return
		}
		if h.Length < 0 || !h.Opcode.Valid() || h.Opcode.IsControl() && (!h.Fin || h.Length > MaxControlPayload) {
			t.Fatalf("accepted %+v", h)
		}
		enc := AppendHeader(nil, h)
		h2, n2, err := Parse(enc)
		if err != nil || n2 != len(enc) || h2 != h {
			t.Fatalf("%+v re-encoded as %x parses as %+v, %d, %v", h, enc, h2, n2, err)
		}
		minimal := len(enc) == n
		if minimal != bytes.Equal(enc, b[:n]) {
			t.Fatalf("header %x re-encoded as %x", b[:n], enc)
		}
	})
}

// FuzzMask: masking twice restores the bytes, masking in two pieces equals masking at once, and
// both equal §5.3's byte-at-a-time definition.
func FuzzMask(f *testing.F) {
	f.Add([]byte("Hello"), uint32(0x37fa213d), uint8(0), uint16(2))
	f.Add(bytes.Repeat([]byte{0xaa}, 100), uint32(0xdeadbeef), uint8(3), uint16(33))
	f.Fuzz(func(t *testing.T, data []byte, k uint32, pos uint8, split uint16) {
		key := [4]byte{byte(k >> 24), byte(k >> 16), byte(k >> 8), byte(k)}
		p := int(pos)
		whole := bytes.Clone(data)
		end := Mask(key, p, whole)
		want := bytes.Clone(data)
		if wantEnd := maskSlow(key, p&3, want); end != wantEnd || !bytes.Equal(whole, want) {
			t.Fatalf("Mask = %x, %d; by definition %x, %d", whole, end, want, wantEnd)
		}
		s := int(split) % (len(data) + 1)
		pieces := bytes.Clone(data)
		mid := Mask(key, p, pieces[:s])
		if end2 := Mask(key, mid, pieces[s:]); end2 != end || !bytes.Equal(pieces, whole) {
			t.Fatalf("split at %d: %x, %d; at once %x, %d", s, pieces, end2, whole, end)
		}
		Mask(key, p, whole)
		if !bytes.Equal(whole, data) {
			t.Fatalf("masked twice: %x, want %x", whole, data)
		}
	})
}

// FuzzParseClose: ParseClose never panics, accepts only a valid code with a UTF-8 reason
// borrowed from the payload, and AppendClose writes back what it accepted.
func FuzzParseClose(f *testing.F) {
	f.Add([]byte("\x03\xe8bye"))
	f.Add([]byte("\x03\xed"))
	f.Add([]byte("\x0f\xa0\xed\xa0\x80"))
	f.Fuzz(func(t *testing.T, payload []byte) {
		code, reason, err := ParseClose(payload)
		if err != nil {
			if code != 0 || reason != nil {
				t.Fatalf("error %v with %d, %q", err, code, reason)
			}
			return
		}
		if len(payload) == 0 {
			if code != 0 {
				t.Fatalf("empty payload: code %d", code)
			}
			return
		}
		if !ValidCloseCode(code) || !utf8.Valid(reason) || !bytes.Equal(reason, payload[2:]) {
			t.Fatalf("accepted %d, %q from %x", code, reason, payload)
		}
		if len(payload) <= MaxControlPayload {
			if back := AppendClose(nil, code, string(reason)); !bytes.Equal(back, payload) {
				t.Fatalf("AppendClose = %x, want %x", back, payload)
			}
		}
	})
}
