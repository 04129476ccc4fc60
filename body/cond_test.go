package body

import (
	"testing"
	"time"
)

func TestETagListMatch(t *testing.T) {
	tests := []struct {
		list, etag string
		strong     bool
		want       bool
	}{
		{`"a"`, `"a"`, true, true},
		{`"a"`, `"a"`, false, true},
		{`W/"a"`, `"a"`, true, false}, // a weak tag never matches strongly
		{`W/"a"`, `"a"`, false, true},
		{`"a"`, `W/"a"`, false, true},
		{`"a"`, `W/"a"`, true, false},
		{`"x", "a"`, `"a"`, true, true},
		{` "x" ,W/"a" `, `"a"`, false, true},
		{`*`, `"a"`, true, true},
		{` * `, "", false, true},
		{`"a"`, "", false, false},
		{`"b"`, `"a"`, false, false},
		{`a`, `"a"`, false, false},            // unquoted: malformed
		{`"a`, `"a"`, false, false},           // unterminated
		{`"x" junk "a"`, `"a"`, false, false}, // nothing after a malformed element counts
		{`"a b"`, `"a b"`, false, false},      // a space is not an etagc
	}
	for _, tc := range tests {
		if got := etagListMatch(tc.list, tc.etag, tc.strong); got != tc.want {
			t.Errorf("etagListMatch(%q, %q, strong=%v) = %v", tc.list, tc.etag, tc.strong, got)
		}
	}
}

func TestHTTPTime(t *testing.T) {
	want := time.Date(1994, 11, 6, 8, 49, 37, 0, time.UTC)
	for _, s := range []string{
		"Sun, 06 Nov 1994 08:49:37 GMT",  // IMF-fixdate
		"Sunday, 06-Nov-94 08:49:37 GMT", // RFC 850
		"Sun Nov  6 08:49:37 1994",       // asctime
	} {
		if got, ok := parseTime(s); !ok || !got.Equal(want) {
			t.Errorf("%q: %v %v", s, got, ok)
		}
	}
	if _, ok := parseTime("yesterday"); ok {
		t.Error("parsed an invalid date")
	}
	if s := formatTime(want.In(time.FixedZone("X", 3600))); s != "Sun, 06 Nov 1994 08:49:37 GMT" {
		t.Error(s)
	}
}

func TestMakeETag(t *testing.T) {
	m := time.Unix(1700000000, 123456789)
	a, b, c := makeETag(m, 10), makeETag(m, 11), makeETag(m.Add(time.Nanosecond), 10)
	if a == b || a == c || a[0] != '"' || a[len(a)-1] != '"' {
		t.Fatal(a, b, c)
	}
	if tag, weak, rest, ok := nextETag(a); !ok || weak || rest != "" || tag != a {
		t.Fatalf("generated tag %s does not parse", a)
	}
}
