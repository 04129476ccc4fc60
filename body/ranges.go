package body

import (
	"math"
	"strings"
)

// rangeKind is what a Range header asks of a representation.
type rangeKind uint8

const (
	rangeWhole rangeKind = iota // no usable range: send it all with 200
	rangePart                   // one satisfiable range: 206
	rangeBad                    // malformed or unsatisfiable: 416
)

// parseRange reads a Range header (RFC 9110 §14.1.2, §14.2) against a representation of size
// bytes and returns the one range to send, as offset and length.
//
// Only the bytes unit is understood; another unit is ignored, as §14.2 requires. A malformed
// ranges-specifier is refused (416), which §14.2 allows. Several ranges are served as the whole
// representation (200), also allowed, and what keeps a client from making the server build
// multipart/byteranges responses out of many small or overlapping pieces. An empty
// representation ignores ranges, since no range of it can be written in a Content-Range.
func parseRange(h string, size int64) (off, n int64, kind rangeKind) {
	if h == "" || size <= 0 {
		return 0, 0, rangeWhole
	}
	unit, specs, ok := strings.Cut(h, "=")
	if !ok {
		return 0, 0, rangeBad
	}
	if !strings.EqualFold(trimOWS(unit), "bytes") {
		return 0, 0, rangeWhole
	}
	count := 0
	var first, last int64
	var suffix bool
	for more := true; more; {
		var spec string
		spec, specs, more = strings.Cut(specs, ",")
		spec = trimOWS(spec)
		if spec == "" {
			continue // empty list elements are allowed (RFC 9110 §5.6.1.2)
		}
		f, l, sfx, ok := parseSpec(spec)
		if !ok {
			return 0, 0, rangeBad
		}
		first, last, suffix = f, l, sfx
		count++
	}
	switch {
	case count == 0:
		return 0, 0, rangeBad
	case count > 1:
		return 0, 0, rangeWhole
	case suffix:
		// §14.1.1: a zero suffix-length is unsatisfiable; a longer one than size means all.
		if last == 0 {
			return 0, 0, rangeBad
		}
		n = min(last, size)
		return size - n, n, rangePart
	case first >= size:
		return 0, 0, rangeBad
	}
	last = min(last, size-1)
	return first, last - first + 1, rangePart
}

// parseSpec parses one range-spec: "first-last", "first-" or "-suffix". For an open end last
// is math.MaxInt64; for a suffix, last holds the suffix-length.
func parseSpec(s string) (first, last int64, suffix, ok bool) {
	dash := strings.IndexByte(s, '-')
	if dash < 0 {
		return 0, 0, false, false
	}
	if dash == 0 {
		n, ok := parseDigits(s[1:])
		return 0, n, true, ok
	}
	first, ok = parseDigits(s[:dash])
	if !ok {
		return 0, 0, false, false
	}
	if dash == len(s)-1 {
		return first, math.MaxInt64, false, true
	}
	last, ok = parseDigits(s[dash+1:])
	if !ok || last < first {
		return 0, 0, false, false // §14.1.1: last-pos before first-pos is invalid
	}
	return first, last, false, true
}

// parseDigits parses a non-empty run of decimal digits, saturating at math.MaxInt64: a position
// past any size is valid syntax and is judged against the size later.
func parseDigits(s string) (int64, bool) {
	if s == "" {
		return 0, false
	}
	var n int64
	for i := 0; i < len(s); i++ {
		d := s[i] - '0'
		if d > 9 {
			return 0, false
		}
		if n > (math.MaxInt64-int64(d))/10 {
			n = math.MaxInt64
			continue
		}
		n = n*10 + int64(d)
	}
	return n, true
}
