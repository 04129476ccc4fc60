package body

import "testing"

func TestParseRange(t *testing.T) {
	const size = 1000
	tests := []struct {
		h    string
		off  int64
		n    int64
		kind rangeKind
	}{
		{"", 0, 0, rangeWhole},
		{"bytes=0-0", 0, 1, rangePart},
		{"bytes=0-499", 0, 500, rangePart},
		{"bytes=500-", 500, 500, rangePart},
		{"bytes=-100", 900, 100, rangePart},
		{"bytes=-5000", 0, 1000, rangePart}, // a suffix longer than the content means all of it
		{"bytes=990-5000", 990, 10, rangePart},
		{"bytes=999-999", 999, 1, rangePart},
		{"BYTES = 1-2", 1, 2, rangePart},  // the unit is case-insensitive
		{"bytes= 1-2 ,", 1, 2, rangePart}, // empty list elements are allowed
		{"bytes=1-99999999999999999999999", 1, 999, rangePart},
		{"bytes=1000-", 0, 0, rangeBad},
		{"bytes=1000-1001", 0, 0, rangeBad},
		{"bytes=99999999999999999999-", 0, 0, rangeBad},
		{"bytes=-0", 0, 0, rangeBad},
		{"bytes=5-4", 0, 0, rangeBad},
		{"bytes=a-b", 0, 0, rangeBad},
		{"bytes=-", 0, 0, rangeBad},
		{"bytes=1", 0, 0, rangeBad},
		{"bytes=+1-2", 0, 0, rangeBad},
		{"bytes=", 0, 0, rangeBad},
		{"bytes 0-1", 0, 0, rangeBad},
		{"bytes=0-1,3-4", 0, 0, rangeWhole}, // several ranges: the whole content
		{"bytes=0-1,x", 0, 0, rangeBad},
		{"items=0-1", 0, 0, rangeWhole}, // an unknown unit is ignored
	}
	for _, tc := range tests {
		off, n, kind := parseRange(tc.h, size)
		if off != tc.off || n != tc.n || kind != tc.kind {
			t.Errorf("%q: (%d, %d, %d), want (%d, %d, %d)", tc.h, off, n, kind, tc.off, tc.n, tc.kind)
		}
	}
	if _, _, kind := parseRange("bytes=0-", 0); kind != rangeWhole {
		t.Errorf("empty content: kind %d, want whole", kind)
	}
}

func FuzzParseRange(f *testing.F) {
	f.Add("bytes=0-10", int64(100))
	f.Add("bytes=-10,5-", int64(3))
	f.Fuzz(func(t *testing.T, h string, size int64) {
		if size < 0 {
			return
		}
		off, n, kind := parseRange(h, size)
		if kind == rangePart && (off < 0 || n <= 0 || off+n > size) {
			t.Fatalf("%q over %d: off %d n %d", h, size, off, n)
		}
	})
}
