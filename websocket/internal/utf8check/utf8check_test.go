package utf8check

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"
)

// valid feeds s whole to a new Validator.
func valid(s []byte) bool {
	var v Validator
	return v.Feed(s) && v.Complete()
}

// failsAt feeds s a byte at a time and returns the index of the byte at which Feed first
// returned false, or -1.
func failsAt(s []byte) int {
	var v Validator
	for i := range s {
		if !v.Feed(s[i : i+1]) {
			return i
		}
	}
	return -1
}

// completions are the boundaries of every range in RFC 3629's table: a prefix that some
// continuation makes valid is made valid by one made of these bytes.
var completions = []byte{0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbf}

// completable reports whether p is the start of some valid UTF-8, by unicode/utf8: whether
// appending at most 3 bytes can make it valid.
func completable(p []byte) bool {
	var try func(s []byte, k int) bool
	try = func(s []byte, k int) bool {
		if utf8.Valid(s) {
			return true
		}
		if k == 0 {
			return false
		}
		for _, c := range completions {
			if try(append(s, c), k-1) {
				return true
			}
		}
		return false
	}
	return try(bytes.Clone(p), 3)
}

// firstImpossible returns the index of the first byte of s at which the prefix can no longer
// be the start of valid UTF-8, or -1: where a fail-fast validator must stop.
func firstImpossible(s []byte) int {
	for i := range s {
		if !completable(s[:i+1]) {
			return i
		}
	}
	return -1
}

// autobahnSequences are the test strings of Autobahn's cases 6.5-6.22 (its
// createUtf8TestSequences, from Markus Kuhn's UTF-8 decoder stress test), with whether each is
// valid. The valid ones are echoed; on the others the connection fails with 1007.
func autobahnSequences() []struct {
	valid bool
	s     string
} {
	type seq = struct {
		valid bool
		s     string
	}
	kosme := "\xce\xba\xe1\xbd\xb9\xcf\x83\xce\xbc\xce\xb5" // κόσμε
	seqs := []seq{
		// 6.5: some correct UTF-8 text.
		{true, "hello\x24world"}, {true, "hello\xc2\xa2world"}, {true, "hello\xe2\x82\xacworld"},
		{true, "hello\xf0\xa4\xad\xa2world"}, {true, kosme},
		// 6.7: first possible sequence of each length.
		{true, "\x00"}, {true, "\xc2\x80"}, {true, "\xe0\xa0\x80"}, {true, "\xf0\x90\x80\x80"},
		// 6.8: first possible sequence of length 5 and 6: beyond U+10FFFF.
		{false, "\xf8\x88\x80\x80\x80"}, {false, "\xfc\x84\x80\x80\x80\x80"},
		// 6.9: last possible sequence of each length.
		{true, "\x7f"}, {true, "\xdf\xbf"}, {true, "\xef\xbf\xbf"}, {true, "\xf4\x8f\xbf\xbf"},
		// 6.10: last possible sequence of length 4, 5, 6: beyond U+10FFFF.
		{false, "\xf7\xbf\xbf\xbf"}, {false, "\xfb\xbf\xbf\xbf\xbf"}, {false, "\xfd\xbf\xbf\xbf\xbf\xbf"},
		// 6.11: other boundary conditions.
		{true, "\xed\x9f\xbf"}, {true, "\xee\x80\x80"}, {true, "\xef\xbf\xbd"}, {true, "\xf4\x8f\xbf\xbf"},
		{false, "\xf4\x90\x80\x80"},
		// 6.12: unexpected continuation bytes.
		{false, "\x80"}, {false, "\xbf"}, {false, "\x80\xbf"}, {false, "\x80\xbf\x80"},
		{false, "\x80\xbf\x80\xbf"}, {false, "\x80\xbf\x80\xbf\x80"}, {false, "\x80\xbf\x80\xbf\x80\xbf"},
		// 6.15: concatenation of incomplete sequences.
		{false, "\xc0\xe0\x80\xf0\x80\x80\xf8\x80\x80\x80\xfc\x80\x80\x80\x80\xdf\xef\xbf\xf7\xbf\xbf\xfb\xbf\xbf\xbf\xfd\xbf\xbf\xbf\xbf"},
		// 6.16: impossible bytes.
		{false, "\xfe"}, {false, "\xff"}, {false, "\xfe\xfe\xff\xff"},
		// 6.17: overlong ASCII "/".
		{false, "\xc0\xaf"}, {false, "\xe0\x80\xaf"}, {false, "\xf0\x80\x80\xaf"},
		{false, "\xf8\x80\x80\x80\xaf"}, {false, "\xfc\x80\x80\x80\x80\xaf"},
		// 6.18: maximum overlong sequences.
		{false, "\xc1\xbf"}, {false, "\xe0\x9f\xbf"}, {false, "\xf0\x8f\xbf\xbf"},
		{false, "\xf8\x87\xbf\xbf\xbf"}, {false, "\xfc\x83\xbf\xbf\xbf\xbf"},
		// 6.19: overlong NUL.
		{false, "\xc0\x80"}, {false, "\xe0\x80\x80"}, {false, "\xf0\x80\x80\x80"},
		{false, "\xf8\x80\x80\x80\x80"}, {false, "\xfc\x80\x80\x80\x80\x80"},
		// 6.20: single UTF-16 surrogates.
		{false, "\xed\xa0\x80"}, {false, "\xed\xad\xbf"}, {false, "\xed\xae\x80"}, {false, "\xed\xaf\xbf"},
		{false, "\xed\xb0\x80"}, {false, "\xed\xbe\x80"}, {false, "\xed\xbf\xbf"},
		// 6.21: paired UTF-16 surrogates.
		{false, "\xed\xa0\x80\xed\xb0\x80"}, {false, "\xed\xa0\x80\xed\xbf\xbf"},
		{false, "\xed\xad\xbf\xed\xb0\x80"}, {false, "\xed\xad\xbf\xed\xbf\xbf"},
		{false, "\xed\xae\x80\xed\xb0\x80"}, {false, "\xed\xae\x80\xed\xbf\xbf"},
		{false, "\xed\xaf\xbf\xed\xb0\x80"}, {false, "\xed\xaf\xbf\xed\xbf\xbf"},
		// 6.22 (part): noncharacters are valid UTF-8 (RFC 3629 does not exclude them).
		{true, "\xef\xbf\xbe"}, {true, "\xef\xbf\xbf"},
		// 6.23: the Specials block, U+FFFD among them.
		{true, "\xef\xbf\xb9"}, {true, "\xef\xbf\xba"}, {true, "\xef\xbf\xbb"}, {true, "\xef\xbf\xbc"},
		{true, "\xef\xbf\xbd"},
	}
	// 6.6: every prefix of κόσμε, valid when it ends on a character boundary.
	for i := 1; i <= len(kosme); i++ {
		seqs = append(seqs, seq{utf8.ValidString(kosme[:i]), kosme[:i]})
	}
	// 6.12.8: every continuation byte in a row.
	var all []byte
	for c := 0x80; c < 0xbf; c++ {
		all = append(all, byte(c))
	}
	seqs = append(seqs, seq{false, string(all)})
	// 6.13: lonely start characters, each followed by a space.
	for _, r := range [][2]int{{0xc0, 0xdf}, {0xe0, 0xef}, {0xf0, 0xf7}, {0xf8, 0xfb}, {0xfc, 0xfd}} {
		var s []byte
		for c := r[0]; c < r[1]; c++ {
			s = append(s, byte(c), ' ')
		}
		seqs = append(seqs, seq{false, string(s)})
	}
	// 6.14: sequences with the last continuation byte missing.
	for _, s := range []string{"\xc0", "\xe0\x80", "\xf0\x80\x80", "\xf8\x80\x80\x80", "\xfc\x80\x80\x80\x80",
		"\xdf", "\xef\xbf", "\xf7\xbf\xbf", "\xfb\xbf\xbf\xbf", "\xfd\xbf\xbf\xbf\xbf"} {
		seqs = append(seqs, seq{false, s})
	}
	// 6.22: the noncharacters of the supplementary planes, U+nFFFE and U+nFFFF.
	for _, z1 := range []byte{0xf0, 0xf1, 0xf2, 0xf3, 0xf4} {
		for _, z2 := range []byte{0x8f, 0x9f, 0xaf, 0xbf} {
			if z1 == 0xf4 && z2 != 0x8f {
				continue // past U+10FFFF
			}
			for _, z3 := range []byte{0xbe, 0xbf} {
				if s := string([]byte{z1, z2, 0xbf, z3}); s != "\xf0\x8f\xbf\xbe" && s != "\xf0\x8f\xbf\xbf" {
					seqs = append(seqs, seq{true, s})
				}
			}
		}
	}
	return seqs
}

func TestAutobahnSequences(t *testing.T) {
	for _, tt := range autobahnSequences() {
		s := []byte(tt.s)
		if got := valid(s); got != tt.valid {
			t.Errorf("%x: valid %v, want %v", s, got, tt.valid)
		}
		if got := utf8.Valid(s); got != tt.valid {
			t.Errorf("%x: the table disagrees with unicode/utf8", s)
		}
		// RFC 6455 §8.1 fail fast: the byte-at-a-time validator stops at the first byte that no
		// continuation can make valid, and not before.
		if got, want := failsAt(s), firstImpossible(s); got != want {
			t.Errorf("%x: fails at byte %d, want %d", s, got, want)
		}
	}
}

// TestAutobahnFailFast: the incremental cases of Autobahn's validator test
// (test_utf8_incremental) and its cases 6.4.1-6.4.4, which send κόσμε, then 0xF4 0x90 0x80 0x80
// (0x110000, past U+10FFFF), then "edited", in frames or in chops of one frame, and expect the
// connection to fail on the piece carrying 0x90, before the rest arrives.
func TestAutobahnFailFast(t *testing.T) {
	kosme := "\xce\xba\xe1\xbd\xb9\xcf\x83\xce\xbc\xce\xb5"
	payload := kosme + "\xf4\x90\x80\x80" + "edited"
	tests := []struct {
		name   string
		pieces []string
		fail   int // the index of the piece on which Feed returns false, or -1
		whole  bool
	}{
		{"µ@ßöäüàá", []string{"µ@ßöäüàá"}, -1, true},
		{"F5", []string{"\xf5"}, 0, false},
		{"surrogate after edited", []string{"edited", "\xed\xa0\x80"}, 1, false},
		{"surrogate split in ASCII", []string{"edit", "ed\xed\xa0\x80"}, 1, false},
		{"lead byte at the end", []string{"edited\xed", "\xa0\x80"}, 1, false},
		{"6.4.1/6.4.3", []string{kosme, "\xf4\x90\x80\x80", "edited"}, 1, false},
		{"6.4.2/6.4.4", []string{payload[:12], payload[12:13], payload[13:]}, 1, false},
		// 6.3.1: κόσμε, a surrogate (ED A0 80), "edited", in one piece.
		{"6.3.1", []string{kosme + "\xed\xa0\x80" + "edited"}, 0, false},
		// 6.2.2: a valid message in two pieces split on a character boundary (6.2.3 and 6.2.4
		// send one byte a frame: failsAt and TestSplits do that for every text here).
		{"6.2.2", []string{"Hello-µ@ßö", "äüàá-UTF-8!!"}, -1, true},
	}
	for _, tt := range tests {
		var v Validator
		fail := -1
		for i, p := range tt.pieces {
			if !v.Feed([]byte(p)) {
				fail = i
				break
			}
		}
		if fail != tt.fail || v.Complete() != tt.whole {
			t.Errorf("%s: fails on piece %d (want %d), complete %v", tt.name, fail, tt.fail, v.Complete())
		}
	}
	// Cases 6.4.2 and 6.3.2 counted in bytes: the byte that fails is 0x90 at index 12, and
	// the surrogate's 0xA0 at index 12.
	if got := failsAt([]byte(payload)); got != 12 {
		t.Errorf("6.4.2: fails at byte %d, want 12", got)
	}
	if got := failsAt([]byte(kosme + "\xed\xa0\x80edited")); got != 12 {
		t.Errorf("6.3.2: fails at byte %d, want 12", got)
	}
}

// TestSecondByteRanges: for every first byte and every second byte, Feed accepts the two as
// the start of a text exactly when RFC 3629 does (by unicode/utf8 and completable). This is the
// whole of §4's table, since the ranges of the third and fourth bytes never vary.
func TestSecondByteRanges(t *testing.T) {
	for a := range 256 {
		for b := range 256 {
			s := []byte{byte(a), byte(b)}
			var v Validator
			if got, want := v.Feed(s), completable(s); got != want {
				t.Fatalf("%x: Feed %v, want %v", s, got, want)
			}
			var w Validator
			if got, want := w.Feed(s[:1]) && w.Feed(s[1:]), completable(s); got != want {
				t.Fatalf("%x in two pieces: Feed %v, want %v", s, got, want)
			}
		}
	}
}

// TestRFC3629Table names each row of RFC 3629 §4's table with the bytes just outside its
// second-byte range.
func TestRFC3629Table(t *testing.T) {
	tests := []struct {
		lead   byte
		lo, hi byte // the second byte's range
		size   int
	}{
		{0xc2, 0x80, 0xbf, 2}, {0xdf, 0x80, 0xbf, 2},
		{0xe0, 0xa0, 0xbf, 3}, // overlong below A0
		{0xe1, 0x80, 0xbf, 3}, {0xec, 0x80, 0xbf, 3},
		{0xed, 0x80, 0x9f, 3}, // surrogates from A0
		{0xee, 0x80, 0xbf, 3}, {0xef, 0x80, 0xbf, 3},
		{0xf0, 0x90, 0xbf, 4}, // overlong below 90
		{0xf1, 0x80, 0xbf, 4}, {0xf3, 0x80, 0xbf, 4},
		{0xf4, 0x80, 0x8f, 4}, // past U+10FFFF from 90
	}
	for _, tt := range tests {
		for _, c := range []byte{tt.lo - 1, tt.lo, tt.hi, tt.hi + 1} {
			s := append([]byte{tt.lead, c}, bytes.Repeat([]byte{0x80}, tt.size-2)...)
			want := c >= tt.lo && c <= tt.hi
			if got := valid(s); got != want {
				t.Errorf("%x: valid %v, want %v", s, got, want)
			}
			if !want && failsAt(s) != 1 {
				t.Errorf("%x: fails at byte %d, want 1", s, failsAt(s))
			}
		}
	}
	for _, c := range []byte{0x80, 0xbf, 0xc0, 0xc1, 0xf5, 0xf8, 0xfe, 0xff} {
		if failsAt([]byte{c}) != 0 {
			t.Errorf("%x accepted as a first byte", c)
		}
	}
}

// TestCodePoints: every code point encodes to valid UTF-8 but the surrogates U+D800-DFFF
// (RFC 3629 §3), which Autobahn sends alone and in pairs (cases 6.20, 6.21), as CESU-8 would.
func TestCodePoints(t *testing.T) {
	enc := func(r rune) []byte { // the encoding of §3, surrogates included
		switch {
		case r < 0x80:
			return []byte{byte(r)}
		case r < 0x800:
			return []byte{0xc0 | byte(r>>6), 0x80 | byte(r)&0x3f}
		case r < 0x10000:
			return []byte{0xe0 | byte(r>>12), 0x80 | byte(r>>6)&0x3f, 0x80 | byte(r)&0x3f}
		}
		return []byte{0xf0 | byte(r>>18), 0x80 | byte(r>>12)&0x3f, 0x80 | byte(r>>6)&0x3f, 0x80 | byte(r)&0x3f}
	}
	for r := rune(0); r <= 0x10ffff; r++ {
		s := enc(r)
		surrogate := r >= 0xd800 && r <= 0xdfff
		if valid(s) == surrogate {
			t.Fatalf("U+%04X (%x): valid %v", r, s, !surrogate)
		}
		if !surrogate && !bytes.Equal(s, utf8.AppendRune(nil, r)) {
			t.Fatalf("U+%04X: encoded %x", r, s)
		}
	}
	for hi := rune(0xd800); hi <= 0xdbff; hi += 0x3f {
		for lo := rune(0xdc00); lo <= 0xdfff; lo += 0x3f {
			if valid(append(enc(hi), enc(lo)...)) || valid(append(enc(lo), enc(hi)...)) {
				t.Fatalf("surrogate pair U+%04X U+%04X accepted", hi, lo)
			}
		}
	}
	// Past U+10FFFF: F4 90 80 80 is 0x110000 (Autobahn 6.11.5), F7 BF BF BF 0x1FFFFF (6.10.1).
	for _, s := range []string{"\xf4\x90\x80\x80", "\xf7\xbf\xbf\xbf"} {
		if valid([]byte(s)) {
			t.Errorf("%x accepted", s)
		}
	}
}

// boundaries are code points at the edges of each encoding length and of each range of RFC
// 3629's table.
var boundaries = []rune{0, 0x7f, 0x80, 0x7ff, 0x800, 0xfff, 0x1000, 0xcfff, 0xd000, 0xd7ff,
	0xe000, 0xfffd, 0xfffe, 0xffff, 0x10000, 0x3ffff, 0x40000, 0xfffff, 0x100000, 0x10ffff}

// TestSplits: a text fed in two or three pieces, split anywhere, is judged as it is whole; an
// invalid one fails on the piece holding the first impossible byte.
func TestSplits(t *testing.T) {
	var texts [][]byte
	var all []byte
	for _, r := range boundaries {
		all = utf8.AppendRune(all, r)
	}
	texts = append(texts, all, []byte("Hello-µ@ßöäüàá-UTF-8!!"), []byte(strings.Repeat("ascii, then 𝄞€é, ", 3)))
	for _, tt := range autobahnSequences() {
		texts = append(texts, []byte("ab"+tt.s+"cd"))
	}
	for _, s := range texts {
		want := utf8.Valid(s)
		bad := firstImpossible(s)
		for i := 0; i <= len(s); i++ {
			for j := i; j <= len(s); j++ {
				var v Validator
				pieces := [][]byte{s[:i], s[i:j], s[j:]}
				fail := -1
				for k, p := range pieces {
					if !v.Feed(p) {
						fail = k
						break
					}
				}
				if got := fail < 0 && v.Complete(); got != want {
					t.Fatalf("%x split at %d, %d: valid %v, want %v", s, i, j, got, want)
				}
				wantFail := -1
				switch {
				case bad < 0:
				case bad < i:
					wantFail = 0
				case bad < j:
					wantFail = 1
				default:
					wantFail = 2
				}
				if fail != wantFail {
					t.Fatalf("%x split at %d, %d: fails on piece %d, want %d", s, i, j, fail, wantFail)
				}
			}
		}
	}
}

func TestStickyAndReset(t *testing.T) {
	var v Validator
	if !v.Feed([]byte("ok \xe2\x82")) || v.Complete() {
		t.Fatal("an unfinished character: Feed false or Complete true")
	}
	if v.Feed([]byte("\xac")); !v.Complete() {
		t.Fatal("finished character not complete")
	}
	if v.Feed([]byte("x\xffy")) || v.Feed([]byte("fine")) || v.Feed(nil) || v.Complete() {
		t.Fatal("not sticky after an impossible byte")
	}
	v.Reset()
	if !v.Feed([]byte("fine")) || !v.Complete() {
		t.Fatal("Reset did not make it ready")
	}
	var z Validator
	if !z.Complete() || !z.Feed(nil) {
		t.Fatal("the zero Validator: an empty text is valid")
	}
}

// randomText returns bytes that are mostly UTF-8 with mistakes: whole runes of every size,
// runes cut short, lone bytes of every class.
func randomText(r *rand.Rand, n int) []byte {
	var b []byte
	for len(b) < n {
		switch r.IntN(10) {
		case 0, 1, 2, 3:
			b = append(b, byte(' '+r.IntN(95)))
		case 4, 5:
			b = utf8.AppendRune(b, boundaries[r.IntN(len(boundaries))])
		case 6:
			b = utf8.AppendRune(b, rune(r.IntN(0x110000)))
		case 7:
			c := utf8.AppendRune(nil, rune(0x80+r.IntN(0x110000-0x80)))
			b = append(b, c[:1+r.IntN(len(c)-1)]...) // cut short
		case 8:
			b = append(b, byte(r.IntN(256)))
		case 9:
			b = append(b, []byte{0xed, 0xa0 + byte(r.IntN(0x20)), 0x80}...) // a surrogate
		}
	}
	return b
}

// TestMatchesUnicodeUTF8: on random texts, fed whole and in random pieces, Feed and Complete
// agree with utf8.Valid.
func TestMatchesUnicodeUTF8(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		s := randomText(r, 1+r.IntN(40))
		want := utf8.Valid(s)
		if got := valid(s); got != want {
			t.Fatalf("%x: valid %v, want %v", s, got, want)
		}
		var v Validator
		ok := true
		for rest := s; len(rest) > 0 && ok; {
			k := min(len(rest), r.IntN(6))
			ok = v.Feed(rest[:k])
			rest = rest[k:]
		}
		if got := ok && v.Complete(); got != want {
			t.Fatalf("%x in pieces: valid %v, want %v", s, got, want)
		}
	}
}

func BenchmarkFeed(b *testing.B) {
	mixed := []byte(strings.Repeat("Hello, κόσμε! Ünïcödé — 日本語のテキスト 𝄞 ", 30))[:1024]
	for !utf8.Valid(mixed) {
		mixed = mixed[:len(mixed)-1]
	}
	texts := []struct {
		name string
		b    []byte
	}{
		{"ASCII-1KiB", bytes.Repeat([]byte("0123456789abcdef"), 64)},
		{"mixed-1KiB", mixed},
	}
	for _, tt := range texts {
		b.Run(tt.name, func(b *testing.B) {
			b.SetBytes(int64(len(tt.b)))
			b.ReportAllocs()
			for b.Loop() {
				var v Validator
				if !v.Feed(tt.b) || !v.Complete() {
					b.Fatal("invalid")
				}
			}
		})
		b.Run(tt.name+"/utf8.Valid", func(b *testing.B) {
			b.SetBytes(int64(len(tt.b)))
			for b.Loop() {
				if !utf8.Valid(tt.b) {
					b.Fatal("invalid")
				}
			}
		})
	}
}
