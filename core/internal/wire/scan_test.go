package wire

import (
	"strings"
	"testing"
)

func TestMayStartRequest(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want bool
	}{
		{"GET / HTTP/1.1\r\n", true},
		{"\r\n\r\nPOST /x HTTP/1.1\r\nHost: h\r\n\r\n", true},
		{"PROPF", true},                // the start of a method
		{"", true},                     // nothing yet
		{"\r", true},                   // the start of an empty line
		{"UPDATEREDIRECTREF /x", true}, // the longest registered method
		{" GET / HTTP/1.1", false},     // no method
		{"GET\t/ HTTP/1.1", false},     // not a token, then not a space
		{"{\"json\": 1}", false},       // a body, not a request
		{strings.Repeat("x", 60000), false},
		{strings.Repeat("A", 33) + " /", false},
		{"\x00\x01\x02", false},
	} {
		if got := MayStartRequest([]byte(tc.in)); got != tc.want {
			t.Errorf("MayStartRequest(%.40q) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

// TestDataLeft: between chunks nothing is left; within one, what its size says minus what was
// decoded.
func TestDataLeft(t *testing.T) {
	var d ChunkedDecoder
	d.Reset(0)
	if n := d.DataLeft(); n != 0 {
		t.Fatalf("before the first chunk: %d", n)
	}
	src := []byte("10\r\n0123456789abcdef\r\n0\r\n\r\n")
	buf := make([]byte, 6)
	if _, ns, _ := d.Decode(buf, src); d.DataLeft() != 10 {
		t.Fatalf("after 6 of 16 data bytes: %d left", d.DataLeft())
	} else {
		src = src[ns:]
	}
	if _, _, err := d.Decode(make([]byte, 64), src); err == nil && d.DataLeft() != 0 {
		t.Fatalf("at the end: %d left", d.DataLeft())
	}
}
