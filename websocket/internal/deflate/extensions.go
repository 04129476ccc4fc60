package deflate

import "github.com/dwellhttp/dwell/internal/syntax"

// The syntax of Sec-WebSocket-Extensions: RFC 6455 §9.1, with RFC 7230's list rule (a field may
// appear several times, its lines' lists make one list, and empty list elements are ignored):
//
//	extension       = extension-token *( ";" extension-param )
//	extension-param = token [ "=" (token | quoted-string) ]
//
// with optional whitespace around ";", "=" and ",". A quoted value is unescaped and must then be
// a token itself (§9.1: "the value after quoted-string unescaping MUST conform to the 'token'
// ABNF").
//
// The scanner reads a field line an element and a parameter at a time, for Negotiate to judge
// each as it comes, and builds nothing: a name is a substring of the line, and a value is read
// only for the window size it may be, the one kind of value permessage-deflate defines (RFC
// 7692 §7.1.2), a quoted one unescaped byte by byte on the way. A handshake's extensions are
// thus read with no allocation, and nothing of the line is kept.

// scanner walks one field line.
type scanner struct {
	s string
	i int
}

// ows skips optional whitespace (RFC 7230 §3.2.3: SP and HTAB).
func (sc *scanner) ows() {
	for sc.i < len(sc.s) && (sc.s[sc.i] == ' ' || sc.s[sc.i] == '\t') {
		sc.i++
	}
}

// token returns the token at sc.i, or "" when there is none.
func (sc *scanner) token() string {
	start := sc.i
	for sc.i < len(sc.s) && syntax.IsTchar[sc.s[sc.i]] {
		sc.i++
	}
	return sc.s[start:sc.i]
}

// extension reads the name of the line's next list element, past whitespace and empty elements
// (RFC 7230 §7: "a recipient MUST accept and ignore" them): "" at the line's end. ok is false
// when what comes is not a name.
//
// The scanner must be at the start of the line or where param left it, past the ',' that ends
// an element.
func (sc *scanner) extension() (name string, ok bool) {
	for {
		sc.ows()
		if sc.i == len(sc.s) {
			return "", true
		}
		if sc.s[sc.i] != ',' {
			break
		}
		sc.i++ // an empty element
	}
	name = sc.token()
	return name, name != ""
}

// param reads the next parameter of the element whose name extension read: its name, whether
// it has a value, and the value as a window size (windowDigit: 8 to 15, or something else when
// it is no window size). more is false when the element has no more parameters: the scanner is
// then past the ',' that ends it, or at the line's end. ok is false for a malformed line.
func (sc *scanner) param() (name string, hasValue bool, bits int, more, ok bool) {
	sc.ows()
	if sc.i == len(sc.s) {
		return "", false, 0, false, true
	}
	switch sc.s[sc.i] {
	case ',':
		sc.i++
		return "", false, 0, false, true
	case ';':
		sc.i++
	default:
		return "", false, 0, false, false // something other than a separator after a token
	}
	sc.ows()
	if name = sc.token(); name == "" {
		return "", false, 0, false, false // ";" with no parameter after it
	}
	sc.ows()
	if sc.i == len(sc.s) || sc.s[sc.i] != '=' {
		return name, false, 0, true, true
	}
	sc.i++
	sc.ows()
	if sc.i < len(sc.s) && sc.s[sc.i] == '"' {
		bits, ok = sc.quoted()
		return name, true, bits, true, ok
	}
	v := sc.token()
	for i := range len(v) {
		bits = windowDigit(bits, v[i])
	}
	return name, true, bits, true, v != "" // "=" must be followed by a value
}

// quoted reads a quoted-string (RFC 7230 §3.2.6) at sc.i, which must be a token once unescaped
// (RFC 6455 §9.1), and returns the unescaped value as a window size (windowDigit):
//
//	quoted-string = DQUOTE *( qdtext / quoted-pair ) DQUOTE
//	qdtext        = HTAB / SP / %x21 / %x23-5B / %x5D-7E / obs-text
//	quoted-pair   = "\" ( HTAB / SP / VCHAR / obs-text )
//
// Every tchar may be qdtext or escaped, and '"' and '\' are no tchars: the value is a token
// exactly when each byte between the quotes is a tchar, or a '\' followed by one, and there is
// at least one.
func (sc *scanner) quoted() (bits int, ok bool) {
	sc.i++ // the opening quote
	empty := true
	for sc.i < len(sc.s) {
		c := sc.s[sc.i]
		sc.i++
		switch c {
		case '"':
			return bits, !empty // a token is not empty
		case '\\':
			if sc.i == len(sc.s) {
				return 0, false // an escape at the end
			}
			c = sc.s[sc.i]
			sc.i++
		}
		if !syntax.IsTchar[c] {
			return 0, false // not a token, or not a quoted-string at all (a control character)
		}
		bits, empty = windowDigit(bits, c), false
	}
	return 0, false // no closing quote
}

// windowDigit extends w, a window size read so far (RFC 7692 §7.1.2.1, §7.1.2.2), by the
// value's next byte c. A window size is a decimal integer from 8 to 15 with no leading zeros:
// w starts at 0, becomes -1 for a value that cannot be one (a byte other than a digit, a
// leading zero, a number over 15), and ends as the size when it is 8 or more.
func windowDigit(w int, c byte) int {
	if w < 0 || c < '0' || c > '9' {
		return -1
	}
	if w = w*10 + int(c-'0'); w == 0 || w > 15 {
		return -1
	}
	return w
}
