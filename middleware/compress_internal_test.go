package middleware

import (
	"strings"
	"testing"
)

// TestAcceptsGzip: q-values honoured, x-gzip and "*", case and spaces, malformed q-values.
func TestAcceptsGzip(t *testing.T) {
	cases := []struct {
		v    string
		want bool
	}{
		{"", false},
		{"gzip", true},
		{"GZip", true},
		{"x-gzip", true},
		{"deflate, gzip, br", true},
		{"br;q=1.0, gzip;q=0.8, *;q=0.1", true},
		{"gzip;q=0", false},
		{"gzip; q=0.000", false},
		{"gzip;q=0.001", true},
		{"gzip;q=1", true},
		{"gzip;q=1.000", true},
		{"gzip;q=1.001", false}, // over 1: malformed
		{"gzip;q=2", false},
		{"gzip;q=0.0001", false}, // four decimals: malformed
		{"gzip;q=", false},
		{"gzip;q=abc", false},
		{"gzip ; Q=0.5", true},
		{"gzip;level=1", true},
		{"*", true},
		{"*;q=0", false},
		{"*;q=0.5, gzip;q=0", false}, // named beats "*"
		{"gzip;q=0, *", false},
		{"identity", false},
		{"deflate, br", false},
		{"gzipx", false},
		{" , gzip ,", true},
	}
	for _, tc := range cases {
		if got := accepts(tc.v); got != tc.want {
			t.Errorf("%q: %v, want %v", tc.v, got, tc.want)
		}
	}
	// Several field lines are one list, in order.
	for _, tc := range []struct {
		lines []string
		want  bool
	}{
		{[]string{"br", "gzip"}, true},
		{[]string{"br", "deflate"}, false},
		{[]string{"gzip;q=0", "*"}, false},
		{[]string{"*", "gzip;q=0"}, false},
		{[]string{"*;q=0", "x-gzip"}, true},
	} {
		if got := accepts(tc.lines...); got != tc.want {
			t.Errorf("%q: %v, want %v", tc.lines, got, tc.want)
		}
	}
}

// accepts is acceptsGzip of the field lines given.
func accepts(lines ...string) bool {
	return acceptsGzip(func(yield func([]byte) bool) {
		for _, l := range lines {
			if !yield([]byte(l)) {
				return
			}
		}
	})
}

// TestMatchType: exact types, and patterns with a '*'.
func TestMatchType(t *testing.T) {
	cases := []struct {
		pattern, mt string
		want        bool
	}{
		{"text/html", "text/html", true},
		{"text/html", "TEXT/HTML", true},
		{"text/html", "text/htm", false},
		{"text/*", "text/csv", true},
		{"text/*", "image/png", false},
		{"application/*+json", "application/ld+json", true},
		{"application/*+json", "application/json", false},
		{"application/*+json", "application/+json", true},
		{"application/*+json", "application/jso", false},
	}
	for _, tc := range cases {
		if got := matchType(tc.pattern, tc.mt); got != tc.want {
			t.Errorf("%q %q: %v", tc.pattern, tc.mt, got)
		}
	}
}

// FuzzAcceptsGzip: the parser never panics, white space around elements does not change the
// answer, and a value that refuses gzip first refuses it whatever follows.
func FuzzAcceptsGzip(f *testing.F) {
	for _, s := range []string{"gzip", "gzip;q=0.5", "br, gzip;q=0", "*;q=0.1", "x-gzip;q=1.000", ";;,,=", "gzip;q"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		got := accepts(v)
		spaced := strings.ReplaceAll(v, ",", " , ")
		if strings.ContainsAny(v, " \t") || strings.Contains(v, `"`) {
			return
		}
		if accepts(spaced) != got {
			t.Fatalf("%q: %v, but %q: %v", v, got, spaced, !got)
		}
		if accepts("gzip;q=0,"+v) || accepts("gzip;q=0", v) {
			t.Fatalf("gzip;q=0 followed by %q accepts gzip", v)
		}
	})
}

// TestListHas: an entity tag is found as an element of the list, not as part of another.
func TestListHas(t *testing.T) {
	for _, tc := range []struct {
		list string
		want bool
	}{
		{`W/"a"`, true},
		{` W/"a" `, true},
		{`"b", W/"a"`, true},
		{`W/"a",W/"b"`, true},
		{`"b" ,W/"a", "c"`, true},
		{`"a"`, false},
		{`xW/"a"`, false},
		{`W/"a"x`, false},
		{`W/"ab"`, false},
		{`*`, false},
		{``, false},
		{`W/"a"x, W/"a"`, true},
	} {
		if got := listHas([]byte(tc.list), `W/"a"`); got != tc.want {
			t.Errorf("%q: %v, want %v", tc.list, got, tc.want)
		}
	}
}
