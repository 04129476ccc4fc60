package wire

import (
	"iter"
	"strings"
	"unsafe"

	"github.com/dwellhttp/dwell/internal/syntax"
)

// parseTarget splits the request-target into path and query (RFC 9112 §3.2) and checks the
// path's escapes; decodePath decodes it once the head has its arena.
// The four forms: origin-form "/p?q" for most requests; absolute-form "http://host/p?q", which a
// server MUST accept (§3.2.2) and whose authority replaces Host; authority-form "host:port", only
// for CONNECT (§3.2.3); asterisk-form "*", only for OPTIONS (§3.2.4).
func parseTarget(r *Request) *Reject {
	t := r.Bytes(r.Target)
	method := r.Bytes(r.Method)
	off := r.Target.off
	switch {
	case string(method) == "CONNECT":
		if t[0] == '/' || !validAuthority(t) {
			return errTarget
		}
		return nil
	case t[0] == '/':
	case len(t) == 1 && t[0] == '*':
		if string(method) != "OPTIONS" {
			return errTarget
		}
		r.Path = r.Target
		return nil
	default:
		n := schemeLen(t)
		if n == 0 {
			return errTarget
		}
		rest := t[n:]
		end := 0
		for end < len(rest) && rest[end] != '/' && rest[end] != '?' {
			end++
		}
		if !validAuthority(rest[:end]) {
			return errTarget
		}
		off += uint32(n + end)
		t = rest[end:]
	}
	q := len(t)
	for i, c := range t {
		if c == '?' {
			q = i
			break
		}
	}
	raw := t[:q]
	if len(raw) == 0 { // "http://host" or "http://host?q": the root, set by decodePath
		r.Path = Span{}
		return nil
	}
	if r.Has(escaped) && !validEscapes(raw) {
		return errPercent
	}
	r.Path = Span{off, uint32(q)}
	return nil
}

// ScratchNeeded is how many scratch bytes decodePath and query decoding may use: none for the
// common target without escapes.
func (r *Request) ScratchNeeded() int {
	t := r.Bytes(r.Target)
	if t[0] == '/' && !r.Has(escaped) {
		return 0
	}
	return len(t) + 1
}

// DecodePath percent-decodes the path into the arena's scratch space (sized for it by
// scratchNeeded); escapes were validated while parsing.
func (r *Request) DecodePath() {
	if r.Path.n == 0 {
		if !r.IsMethod("CONNECT") {
			r.Path, _ = r.AppendScratch([]byte{'/'})
		}
		return
	}
	raw := r.Bytes(r.Path)
	if !hasByte(raw, '%') {
		return
	}
	start := len(r.Arena)
	if len(raw) > cap(r.Arena)-start {
		return // no room: cannot happen with scratchNeeded's size
	}
	dec, _ := appendUnescape(r.Arena, raw, false)
	r.Arena = dec
	r.Path = Span{uint32(start), uint32(len(dec) - start)}
}

// validEscapes reports whether every '%' in b starts a %XX escape.
func validEscapes(b []byte) bool {
	for i := 0; i < len(b); i++ {
		if b[i] == '%' {
			if i+2 >= len(b) || unhex(b[i+1]) < 0 || unhex(b[i+2]) < 0 {
				return false
			}
			i += 2
		}
	}
	return true
}

// Authority returns the authority of an absolute-form or authority-form target, or nil.
func (r *Request) Authority() []byte {
	t := r.Bytes(r.Target)
	if r.IsMethod("CONNECT") {
		return t
	}
	n := schemeLen(t)
	if n == 0 {
		return nil
	}
	t = t[n:]
	for i, c := range t {
		if c == '/' || c == '?' {
			return t[:i]
		}
	}
	return t
}

// schemeLen returns the length of a leading "http://" or "https://" (any case), or 0.
func schemeLen[S ~string | ~[]byte](t S) int {
	switch {
	case len(t) >= 7 && equalFoldPrefix(t, "http://"):
		return 7
	case len(t) >= 8 && equalFoldPrefix(t, "https://"):
		return 8
	}
	return 0
}

// equalFoldPrefix reports whether t starts with the lower-case ASCII string p, ignoring case.
func equalFoldPrefix[S ~string | ~[]byte](t S, p string) bool {
	for i := range len(p) {
		if syntax.Lower(t[i]) != p[i] {
			return false
		}
	}
	return true
}

func validAuthority(a []byte) bool {
	if len(a) == 0 {
		return false
	}
	for _, c := range a {
		if !isHostByte[c] {
			return false
		}
	}
	return true
}

func hasByte(b []byte, c byte) bool {
	for _, x := range b {
		if x == c {
			return true
		}
	}
	return false
}

// appendUnescape appends s with %XX sequences decoded to dst; plusSpace also turns '+' into a
// space, as in query strings. ok is false on a malformed escape.
func appendUnescape[S ~string | ~[]byte](dst []byte, s S, plusSpace bool) ([]byte, bool) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '%':
			if i+2 >= len(s) {
				return dst, false
			}
			h, l := unhex(s[i+1]), unhex(s[i+2])
			if h < 0 || l < 0 {
				return dst, false
			}
			dst = append(dst, byte(h<<4|l))
			i += 2
		case c == '+' && plusSpace:
			dst = append(dst, ' ')
		default:
			dst = append(dst, c)
		}
	}
	return dst, true
}

func unhex(c byte) int {
	switch {
	case '0' <= c && c <= '9':
		return int(c - '0')
	case 'a' <= c && c <= 'f':
		return int(c - 'a' + 10)
	case 'A' <= c && c <= 'F':
		return int(c - 'A' + 10)
	}
	return -1
}

// QueryValue returns the first value of key in the query, decoded, and whether it was there.
func (r *Request) QueryValue(key string) ([]byte, bool) {
	for v := range r.QueryValues(key) {
		return v, true
	}
	return nil, false
}

// QueryValues iterates over the values of key in the query, decoded. Keys are compared after
// decoding, so "a%20b" matches "a b". A value with escapes is decoded into the request arena
// when it has room (so the bytes are the request's, like the others), and into a new slice
// otherwise; a malformed escape is passed through as received.
func (r *Request) QueryValues(key string) iter.Seq[[]byte] {
	return func(yield func([]byte) bool) {
		q := r.Str(r.RawQuery())
		for q != "" {
			var pair string
			pair, q, _ = strings.Cut(q, "&")
			k, v, _ := strings.Cut(pair, "=")
			if !keyMatches(k, key) {
				continue
			}
			if !yield(r.decodeQueryValue(v)) {
				return
			}
		}
	}
}

// decodeQueryValue returns v, a value of the raw query, decoded; see queryValues.
func (r *Request) decodeQueryValue(v string) []byte {
	raw := unsafe.Slice(unsafe.StringData(v), len(v)) // v is in the arena: see Request.Str
	if !strings.ContainsAny(v, "%+") {
		return raw[:len(v):len(v)]
	}
	// The decoded value is never longer than v: decode in place in the arena when v fits.
	if start := len(r.Arena); len(v) <= cap(r.Arena)-start {
		if dec, ok := appendUnescape(r.Arena, v, true); ok {
			r.Arena = dec
			return dec[start:len(dec):len(dec)]
		}
		return raw[:len(v):len(v)]
	}
	if dec, ok := appendUnescape(nil, v, true); ok {
		return dec
	}
	return raw[:len(v):len(v)]
}

// keyMatches reports whether the raw query key k decodes to key.
func keyMatches(k, key string) bool {
	if !strings.ContainsAny(k, "%+") {
		return k == key
	}
	var buf [64]byte
	dec, ok := appendUnescape(buf[:0], k, true)
	return ok && string(dec) == key
}
