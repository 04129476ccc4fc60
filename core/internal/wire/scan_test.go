package wire

import "testing"

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

// TestScanRefusesNoMethod: a request line that does not begin with a method (a token, then a
// space) is refused with 400 as soon as the byte that rules it out arrives; one that may still
// become a request waits for more.
func TestScanRefusesNoMethod(t *testing.T) {
	for _, tc := range []struct {
		in     string
		status int
	}{
		{"GE", 0},
		{"GET /x", 0},
		{"PROPFIND ", 0},
		{"\x00\x01", 400},
		{" GET / HTTP/1.1", 400},
		{"{\"json\": 1}", 400},
		{"\x16\x03\x01\x02\x00", 400}, // a TLS ClientHello on the plaintext port
		{"GET\r\n\r\n", 400},
		{"GET / HTTP/1.1\r\nHost: h\r\n", 0}, // the rest of the head is to come
	} {
		var s HeadScan
		if n, status := s.Scan([]byte(tc.in), 1<<10); status != tc.status || n != ScanMore {
			t.Errorf("Scan(%q) = (%d, %d), want more input (%d) and status %d", tc.in, n, status, ScanMore, tc.status)
		}
	}
}
