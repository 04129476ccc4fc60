// Package utf8check validates UTF-8 (RFC 3629) as it arrives, in pieces of any size, and says
// so at the first byte that no valid text can have there: a Text message's payload must be UTF-8
// (RFC 6455 §5.6, §8.1), and an endpoint that checks it only once the message is complete has
// already buffered, and perhaps decompressed, a message it will refuse. RFC 6455 §8.1 asks the
// endpoint to "fail the WebSocket Connection" on invalid data; Autobahn's testsuite (cases
// 6.4.x) checks that it does so at the fragment carrying the bad byte, not at the message's end.
//
// unicode/utf8's Valid judges a whole text: a piece that ends in the middle of a character is
// not valid alone, and the first bytes of that character must be carried to the next piece.
package utf8check

import "encoding/binary"

// Validator checks a text fed to it in pieces. Its zero value is ready for a new text; it holds
// four bytes of state (what the next byte of a character cut between pieces must be) and
// allocates nothing.
type Validator struct {
	need   uint8 // continuation bytes still to come for a character cut at the end of a piece
	lo, hi uint8 // the range of the next one (§4 of RFC 3629: it depends on the first byte)
	bad    bool  // Feed has seen a byte that valid UTF-8 cannot have there
}

// Feed validates the next piece of the text. It returns false as soon as the bytes fed so far
// cannot be the start of valid UTF-8 — at the first impossible byte, even one in the middle of a
// character (0xF4 0x90, beyond U+10FFFF; 0xED 0xA0, a surrogate; 0xE0 0x80, overlong) or a byte
// that can never appear (0xC0, 0xC1, 0xF5-0xFF) — and from then on it keeps returning false.
// It returns true when what was fed may still be valid, a character left unfinished at the end
// of b included: Complete says whether the text may end there.
//
// Runs of ASCII are checked a 64-bit word at a time, four words at a time once they are long.
func (v *Validator) Feed(b []byte) bool {
	if v.bad {
		return false
	}
	p := b
	// First the rest of a character that the last piece cut.
	for ; v.need > 0 && len(p) > 0; p = p[1:] {
		if c := p[0]; c < v.lo || c > v.hi {
			v.bad = true
			return false
		}
		v.need--
		v.lo, v.hi = 0x80, 0xbf
	}
	for len(p) > 0 {
		c := p[0]
		if c < 0x80 {
			p = p[1:]
			// One ASCII byte is likely followed by more: skip a word of them, and if there was
			// one, skip four words at a time, then the last whole words. In text that mixes
			// scripts this costs a single load per ASCII byte.
			if len(p) >= 8 && word(p)&highBits == 0 {
				p = p[8:]
				for len(p) >= 32 && (word(p)|word(p[8:])|word(p[16:])|word(p[24:]))&highBits == 0 {
					p = p[32:]
				}
				for len(p) >= 8 && word(p)&highBits == 0 {
					p = p[8:]
				}
			}
			continue
		}
		x := first[c]
		if x == xx {
			v.bad = true // a continuation byte with no first byte, or one of C0, C1, F5-FF
			return false
		}
		r := ranges[x>>4]
		// A whole character is checked in one step; the cases repeat the length test so that
		// the compiler drops the bounds checks.
		switch size := int(x & 7); {
		case size == 2 && len(p) >= 2:
			if p[1] < r.lo || p[1] > r.hi {
				v.bad = true
				return false
			}
			p = p[2:]
		case size == 3 && len(p) >= 3:
			if p[1] < r.lo || p[1] > r.hi || p[2]&0xc0 != 0x80 {
				v.bad = true
				return false
			}
			p = p[3:]
		case size == 4 && len(p) >= 4:
			if p[1] < r.lo || p[1] > r.hi || p[2]&0xc0 != 0x80 || p[3]&0xc0 != 0x80 {
				v.bad = true
				return false
			}
			p = p[4:]
		default:
			return v.cut(p, size, r.lo, r.hi)
		}
	}
	return true
}

// cut checks a character that the end of the piece p cuts, size bytes long with its second byte
// in lo..hi, and keeps what the next byte fed must be.
func (v *Validator) cut(p []byte, size int, lo, hi uint8) bool {
	v.need, v.lo, v.hi = uint8(size-1), lo, hi
	for _, c := range p[1:] {
		if c < v.lo || c > v.hi {
			v.bad = true
			return false
		}
		v.need--
		v.lo, v.hi = 0x80, 0xbf
	}
	return true
}

const highBits = 0x8080808080808080 // the high bit of every byte of a word: set only outside ASCII

// word reads 8 bytes of p as one word.
func word(p []byte) uint64 { return binary.LittleEndian.Uint64(p) }

// Complete reports whether the text fed so far is valid UTF-8 as a whole: no impossible byte,
// and no character left unfinished. A message's end is where the caller asks.
func (v *Validator) Complete() bool { return !v.bad && v.need == 0 }

// Reset makes v ready for a new text, as its zero value is.
func (v *Validator) Reset() { *v = Validator{} }

// The byte ranges of RFC 3629 §4:
//
//	UTF8-1 = %x00-7F
//	UTF8-2 = %xC2-DF UTF8-tail
//	UTF8-3 = %xE0 %xA0-BF UTF8-tail / %xE1-EC 2( UTF8-tail ) /
//	         %xED %x80-9F UTF8-tail / %xEE-EF 2( UTF8-tail )
//	UTF8-4 = %xF0 %x90-BF 2( UTF8-tail ) / %xF1-F3 3( UTF8-tail ) /
//	         %xF4 %x80-8F 2( UTF8-tail )
//	UTF8-tail = %x80-BF
//
// first holds, for each first byte of a multi-byte character, its size (low 3 bits) and which
// range its second byte must be in (the index in ranges, high 4 bits); xx marks the bytes no
// character starts with. The narrow second-byte ranges are what exclude overlong forms (E0, F0),
// surrogates (ED: U+D800-DFFF) and code points past U+10FFFF (F4).
var ranges = [5]struct{ lo, hi uint8 }{
	{0x80, 0xbf}, // UTF8-tail
	{0xa0, 0xbf}, // after E0
	{0x80, 0x9f}, // after ED
	{0x90, 0xbf}, // after F0
	{0x80, 0x8f}, // after F4
}

const xx = 0xff

var first = func() (t [256]uint8) {
	for c := range t {
		switch {
		case c < 0x80:
			t[c] = 1
		case c >= 0xc2 && c <= 0xdf:
			t[c] = 2
		case c == 0xe0:
			t[c] = 1<<4 | 3
		case c == 0xed:
			t[c] = 2<<4 | 3
		case c >= 0xe1 && c <= 0xef:
			t[c] = 3
		case c == 0xf0:
			t[c] = 3<<4 | 4
		case c >= 0xf1 && c <= 0xf3:
			t[c] = 4
		case c == 0xf4:
			t[c] = 4<<4 | 4
		default: // 80-BF (continuation bytes), C0-C1 (overlong), F5-FF (past U+10FFFF)
			t[c] = xx
		}
	}
	return t
}()
