package syntax

import (
	"math/rand/v2"
	"strings"
	"testing"
)

func TestIsToken(t *testing.T) {
	for _, tc := range []struct {
		s    string
		want bool
	}{
		{"GET", true}, {"X-Request-Id", true}, {"!#$%&'*+-.^_`|~09azAZ", true},
		{"", false}, {"a b", false}, {"a:b", false}, {"a\x00", false}, {"caf\xc3\xa9", false}, {"(x)", false},
	} {
		if got := IsToken(tc.s); got != tc.want {
			t.Errorf("IsToken(%q) = %v", tc.s, got)
		}
		if got := IsToken([]byte(tc.s)); got != tc.want {
			t.Errorf("IsToken([]byte(%q)) = %v", tc.s, got)
		}
	}
	// The table agrees with the grammar's list, byte for byte.
	for c := 0; c < 256; c++ {
		want := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
			strings.IndexByte("!#$%&'*+-.^_`|~", byte(c)) >= 0
		if IsTchar[c] != want {
			t.Errorf("IsTchar[%#x] = %v", c, IsTchar[c])
		}
	}
}

func TestFold(t *testing.T) {
	if !EqualFold("Content-Length", []byte("content-LENGTH")) || EqualFold("a", "ab") || EqualFold("é", "É") {
		t.Error("EqualFold")
	}
	// EqualLower folds its first argument only: the second is the lower-case spelling.
	if !EqualLower([]byte("Transfer-ENCODING"), "transfer-encoding") || !EqualLower(nil, "") ||
		EqualLower([]byte("host"), "Host") || EqualLower([]byte("hos"), "host") || EqualLower([]byte("h0st"), "host") {
		t.Error("EqualLower")
	}
	if CompareFold("Accept", "accept-encoding") >= 0 || CompareFold("B", "a") <= 0 || CompareFold("X", "x") != 0 {
		t.Error("CompareFold")
	}
}

func TestParseContentLength(t *testing.T) {
	for _, tc := range []struct {
		v    string
		n    int64
		want bool
	}{
		{"0", 0, true}, {"42", 42, true}, {"999999999999999999", 999999999999999999, true},
		{"", 0, false}, {"+1", 0, false}, {"-1", 0, false}, {"1 ", 0, false}, {"0x10", 0, false},
		{"1,1", 0, false}, {"9999999999999999999", 0, false},
	} {
		n, ok := ParseContentLength(tc.v)
		if ok != tc.want || ok && n != tc.n {
			t.Errorf("ParseContentLength(%q) = %d, %v", tc.v, n, ok)
		}
	}
}

func TestStatusAllowsBody(t *testing.T) {
	for status, want := range map[int]bool{100: false, 101: false, 103: false, 200: true, 204: false, 304: false, 404: true} {
		if StatusAllowsBody(status) != want {
			t.Errorf("StatusAllowsBody(%d)", status)
		}
	}
}

func TestQValue(t *testing.T) {
	for params, want := range map[string]int{
		"": 1000, ";q=1": 1000, ";q=1.000": 1000, "; Q = 0.5 ": 500, ";q=0.123": 123, ";level=1;q=0.01": 10,
		";q=0": 0, ";q=0.000": 0, ";q=1.5": 0, ";q=2": 0, ";q=0.1234": 0, ";q=": 0, ";q=.5": 0, ";q=0,5": 0,
	} {
		if got := QValue([]byte(params)); got != want {
			t.Errorf("QValue(%q) = %d, want %d", params, got, want)
		}
	}
}

// TestHasCtlOrDel: the word test marks exactly the words with a byte below SP or DEL, for every
// byte at every position among valid neighbours and for random words.
func TestHasCtlOrDel(t *testing.T) {
	want := func(x uint64) bool {
		for k := range 8 {
			if b := byte(x >> (8 * k)); b < 0x20 || b == 0x7f {
				return true
			}
		}
		return false
	}
	for _, fill := range []byte{'a', ' ', '~', 0x80, 0xff} {
		for pos := range 8 {
			for b := range 256 {
				x := uint64(0)
				for k := range 8 {
					c := fill
					if k == pos {
						c = byte(b)
					}
					x |= uint64(c) << (8 * k)
				}
				if got := hasCtlOrDel(x); got != want(x) {
					t.Fatalf("hasCtlOrDel(%#016x) = %v", x, got)
				}
			}
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 100000 {
		if x := r.Uint64(); hasCtlOrDel(x) != want(x) {
			t.Fatalf("hasCtlOrDel(%#016x) = %v", x, !want(x))
		}
	}
}
