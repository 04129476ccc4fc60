package frame

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestParseClose(t *testing.T) {
	tests := []struct {
		name    string
		payload string
		code    uint16
		reason  string
		err     error
	}{
		// §5.5.1: "The Close frame MAY contain a body"; without one there is no status (§7.1.5).
		{"empty", "", 0, "", nil},
		{"code only", "\x03\xe8", CloseNormal, "", nil},
		{"code and reason", "\x03\xe9bye", CloseGoingAway, "bye", nil},
		{"UTF-8 reason", "\x0f\xa0κόσμε", 4000, "κόσμε", nil},
		// §5.5.1: "the first two bytes of the body MUST be a 2-byte unsigned integer".
		{"one byte", "\x03", 0, "", ErrCloseLength},
		// §7.4.1: 1005 and 1006 "MUST NOT be set as a status code in a Close control frame".
		{"1005", "\x03\xed", 0, "", ErrCloseCode},
		{"1006", "\x03\xee", 0, "", ErrCloseCode},
		{"0", "\x00\x00", 0, "", ErrCloseCode},
		// §5.5.1: the body after the code "is not guaranteed to be human readable" but is
		// UTF-8; Autobahn 7.5.1 sends κόσμε with a surrogate (ED A0 80) in it.
		{"reason not UTF-8", "\x03\xe8\xce\xba\xe1\xbd\xb9\xcf\x83\xce\xbc\xce\xb5\xed\xa0\x80\x65\x64\x69\x74\x65\x64", 0, "", ErrCloseReason},
		{"reason cut in a character", "\x03\xe8\xce", 0, "", ErrCloseReason},
	}
	for _, tt := range tests {
		code, reason, err := ParseClose([]byte(tt.payload))
		if code != tt.code || string(reason) != tt.reason || !errors.Is(err, tt.err) {
			t.Errorf("%s: ParseClose = %d, %q, %v; want %d, %q, %v", tt.name, code, reason, err, tt.code, tt.reason, tt.err)
		}
	}
}

// TestValidCloseCode: the codes Autobahn's cases 7.7.x send (valid: echoed) and 7.9.x send
// (invalid: the connection fails with 1002), and every boundary of §7.4's ranges.
func TestValidCloseCode(t *testing.T) {
	valid := []uint16{1000, 1001, 1002, 1003, 1007, 1008, 1009, 1010, 1011, 3000, 3999, 4000, 4999, // 7.7.x
		1012, 1013, 1014} // registered after RFC 6455 (IANA, §11.7)
	invalid := []uint16{0, 999, 1004, 1005, 1006, 1016, 1100, 2000, 2999, // 7.9.x
		1015, 5000, 65535}
	for _, c := range valid {
		if !ValidCloseCode(c) {
			t.Errorf("%d refused", c)
		}
	}
	for _, c := range invalid {
		if ValidCloseCode(c) {
			t.Errorf("%d accepted", c)
		}
	}
	n := 0
	for c := range 1 << 16 {
		if ValidCloseCode(uint16(c)) {
			n++
		}
	}
	if want := 4 + 8 + 2000; n != want { // 1000-1003, 1007-1014, 3000-4999
		t.Errorf("%d valid codes, want %d", n, want)
	}
}

func TestAppendClose(t *testing.T) {
	long := strings.Repeat("a", 122) + "é" + "b" // é straddles the 123-byte limit of the reason
	tests := []struct {
		name   string
		code   uint16
		reason string
		want   string
	}{
		{"normal", CloseNormal, "", "\x03\xe8"},
		{"with reason", CloseGoingAway, "bye", "\x03\xe9bye"},
		// §7.1.5: no code, no body; 1005 "MUST NOT be set as a status code" (§7.4.1).
		{"no status", 0, "ignored", ""},
		{"1005", CloseNoStatus, "ignored", ""},
		// §5.5: the payload of a control frame is at most 125 bytes; the cut keeps UTF-8 whole.
		{"longest reason", CloseNormal, strings.Repeat("x", 123), "\x03\xe8" + strings.Repeat("x", 123)},
		{"reason cut", CloseNormal, strings.Repeat("x", 200), "\x03\xe8" + strings.Repeat("x", 123)},
		{"cut on a character boundary", CloseNormal, long, "\x03\xe8" + strings.Repeat("a", 122)},
		{"cut after a whole character", CloseNormal, strings.Repeat("a", 121) + "é" + "b", "\x03\xe8" + strings.Repeat("a", 121) + "é"},
	}
	for _, tt := range tests {
		got := AppendClose([]byte("x"), tt.code, tt.reason)
		if string(got[1:]) != tt.want {
			t.Errorf("%s: AppendClose = %q, want %q", tt.name, got[1:], tt.want)
		}
		if len(got)-1 > MaxControlPayload {
			t.Errorf("%s: %d bytes", tt.name, len(got)-1)
		}
		if _, _, err := ParseClose(got[1:]); err != nil && ValidCloseCode(tt.code) {
			t.Errorf("%s: does not parse back: %v", tt.name, err)
		}
	}
	// Every character size cut at every position stays UTF-8.
	for _, r := range []string{"a", "é", "€", "𝄞"} {
		for pad := range 4 {
			reason := strings.Repeat("z", pad) + strings.Repeat(r, 130)
			got := AppendClose(nil, CloseNormal, reason)
			if !utf8.Valid(got[2:]) || len(got) > MaxControlPayload || len(got) < MaxControlPayload-3 {
				t.Errorf("%q×130 after %d: %d bytes, valid %v", r, pad, len(got), utf8.Valid(got[2:]))
			}
		}
	}
}
