// Package syntax holds the parts of HTTP's syntax that dwell's packages share — the byte
// classes of tokens and field values, case-insensitive comparison, Content-Length and which
// statuses carry a body, q-values — so that the server's parser (core/internal/wire), the router, the
// middleware and the net/http bridge agree on them by construction rather than by copies.
package syntax

import "bytes"

// Byte classes of RFC 9110 §5.6.2 (token) and §5.5 (field values), as tables so that a
// parser's inner loops are one load and one test per byte.

// IsTchar: tchar = "!" / "#" / "$" / "%" / "&" / "'" / "*" / "+" / "-" / "." / "^" / "_" / "`" /
// "|" / "~" / DIGIT / ALPHA (RFC 9110 §5.6.2). Field names and methods are tokens.
var IsTchar = func() (t [256]bool) {
	for c := '0'; c <= '9'; c++ {
		t[c] = true
	}
	for c := 'a'; c <= 'z'; c++ {
		t[c] = true
		t[c-'a'+'A'] = true
	}
	for _, c := range "!#$%&'*+-.^_`|~" {
		t[c] = true
	}
	return t
}()

// IsValueByte: field-content is VCHAR, SP, HTAB and obs-text (RFC 9110 §5.5). Everything else —
// NUL, a bare CR or LF, other CTLs, DEL — makes a field invalid.
var IsValueByte = func() (t [256]bool) {
	for c := 0x20; c < 0x7f; c++ {
		t[c] = true
	}
	for c := 0x80; c <= 0xff; c++ {
		t[c] = true
	}
	t['\t'] = true
	return t
}()

// IsToken reports whether s is a token (RFC 9110 §5.6.2): a method, a field name, a parameter's
// name.
func IsToken[S ~string | ~[]byte](s S) bool {
	for i := range len(s) {
		if !IsTchar[s[i]] {
			return false
		}
	}
	return len(s) > 0
}

// IsFieldValue reports whether every byte of v is field content or HTAB (RFC 9110 §5.5), so that
// no value can end a field line early or start another. It tests eight bytes at a time while
// none is below SP or DEL, the usual case, and then finds which byte a marked word holds.
func IsFieldValue(v string) bool {
	i := 0
	for ; i+8 <= len(v); i += 8 {
		if hasCtlOrDel(load64(v[i:])) {
			break // the byte loop below finds which, allowing HTAB
		}
	}
	for ; i < len(v); i++ {
		if !IsValueByte[v[i]] {
			return false
		}
	}
	return true
}

// load64 returns s's first eight bytes as a little-endian word (one load: the compiler combines
// the byte loads).
func load64(s string) uint64 {
	_ = s[7]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// hasCtlOrDel reports whether a byte of x is below 0x20 or is 0x7F: exact for the word as a
// whole (a borrow can mark a wrong byte, never a word with no such byte), which is all that
// IsFieldValue asks. Bytes from 0x80 up, obs-text, are never marked: their high bit is masked.
func hasCtlOrDel(x uint64) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	below := (x - 0x20*ones) &^ x & highs
	d := x ^ 0x7f*ones // DEL becomes 0
	del := (d - ones) &^ d & highs
	return below|del != 0
}

// Lower folds an ASCII letter to lower case.
func Lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// EqualLower reports whether b equals the lower-case ASCII string lower, ignoring case in b: a
// name or token compared with the spelling a parser looks for.
func EqualLower(b []byte, lower string) bool {
	if len(b) != len(lower) {
		return false
	}
	for i := range len(b) {
		if Lower(b[i]) != lower[i] {
			return false
		}
	}
	return true
}

// EqualFold reports whether a and b are equal without regard to ASCII case, as field names and
// tokens are compared (RFC 9110 §5.1).
func EqualFold[A, B ~string | ~[]byte](a A, b B) bool {
	if len(a) != len(b) {
		return false
	}
	if string(a) == string(b) {
		return true // the usual case, a name spelled as the standard spells it: one compare
	}
	for i := range len(a) {
		if Lower(a[i]) != Lower(b[i]) {
			return false
		}
	}
	return true
}

// CompareFold orders a and b as strings.Compare does, without regard to ASCII case.
func CompareFold(a, b string) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		if ca, cb := Lower(a[i]), Lower(b[i]); ca != cb {
			return int(ca) - int(cb)
		}
	}
	return len(a) - len(b)
}

// ParseContentLength parses a Content-Length value: 1*DIGIT (RFC 9110 §8.6), of at most 18
// digits so that it fits an int64. A sign, a space, a list or hex is not one.
func ParseContentLength[S ~string | ~[]byte](v S) (int64, bool) {
	if len(v) == 0 || len(v) > 18 {
		return 0, false
	}
	var n int64
	for i := range len(v) {
		c := v[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}

// StatusAllowsBody reports whether a response of status may carry a body: not a 1xx, a 204 or
// a 304 (RFC 9110 §6.4.1; a response to HEAD has none either, whatever its status).
func StatusAllowsBody(status int) bool {
	return status >= 200 && status != 204 && status != 304
}

// QValue returns the weight among the parameters of a list element such as Accept-Encoding's
// ("gzip;q=0.5" has the parameters ";q=0.5"), in thousandths (RFC 9110 §12.4.2): 1000 without
// a q parameter, and 0 — not acceptable — for a malformed one.
func QValue(params []byte) int {
	for len(params) > 0 {
		var p []byte
		p, params, _ = bytes.Cut(params, []byte(";"))
		name, value, _ := bytes.Cut(p, []byte("="))
		if !bytes.EqualFold(bytes.TrimSpace(name), []byte("q")) {
			continue
		}
		// qvalue = ( "0" [ "." 0*3DIGIT ] ) / ( "1" [ "." 0*3("0") ] )
		value = bytes.TrimSpace(value)
		if len(value) == 0 || len(value) > 5 || value[0] != '0' && value[0] != '1' ||
			len(value) > 1 && value[1] != '.' {
			return 0
		}
		w := int(value[0]-'0') * 1000
		scale := 100
		for _, d := range value[min(len(value), 2):] {
			if d < '0' || d > '9' || value[0] == '1' && d != '0' {
				return 0
			}
			w += int(d-'0') * scale
			scale /= 10
		}
		return w
	}
	return 1000
}
