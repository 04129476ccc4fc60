package deflate

import (
	"strings"

	"github.com/dwellhttp/dwell/internal/syntax"
)

// Extension is one element of a Sec-WebSocket-Extensions list: an extension's name and its
// parameters, in the order they were written. Names compare without regard to case
// (strings.EqualFold), as RFC 6455 §9.1 makes them tokens.
type Extension struct {
	Name   string
	Params []Param
}

// Param is one parameter of an extension: a name, and a value when HasValue. A value written as
// a quoted-string is held unquoted.
type Param struct {
	Name     string
	Value    string
	HasValue bool
}

// ParseExtensions parses the Sec-WebSocket-Extensions field lines of a handshake, every line's
// comma-separated list in order (RFC 6455 §9.1, with RFC 7230's list rule: a field may appear
// several times, and empty list elements are ignored):
//
//	extension       = extension-token *( ";" extension-param )
//	extension-param = token [ "=" (token | quoted-string) ]
//
// with optional whitespace around ";", "=" and ",". A quoted value is unescaped and must then be
// a token itself (§9.1: "the value after quoted-string unescaping MUST conform to the 'token'
// ABNF"). Anything else is ErrMalformed, for the whole set: a server cannot accept part of
// a list it cannot read.
func ParseExtensions(values []string) ([]Extension, error) {
	var exts []Extension
	for _, v := range values {
		p := extParser{s: v}
		for {
			p.ows()
			if p.done() {
				break
			}
			if p.s[p.i] == ',' { // an empty element (RFC 7230 §7)
				p.i++
				continue
			}
			ext, ok := p.extension()
			if !ok {
				return nil, ErrMalformed
			}
			exts = append(exts, ext)
			if p.done() {
				break
			}
			if p.s[p.i] != ',' {
				return nil, ErrMalformed // something other than a list separator after an element
			}
			p.i++
		}
	}
	return exts, nil
}

// String writes e as a list element of Sec-WebSocket-Extensions: "name; param; param=value".
// Names and values are written as they are, so the result parses back only when they are
// tokens, as everything ParseExtensions returns is.
func (e Extension) String() string {
	var b strings.Builder
	b.WriteString(e.Name)
	for _, p := range e.Params {
		b.WriteString("; ")
		b.WriteString(p.Name)
		if p.HasValue {
			b.WriteByte('=')
			b.WriteString(p.Value)
		}
	}
	return b.String()
}

// extParser walks one field line.
type extParser struct {
	s string
	i int
}

func (p *extParser) done() bool { return p.i == len(p.s) }

// ows skips optional whitespace (RFC 7230 §3.2.3: SP and HTAB).
func (p *extParser) ows() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t') {
		p.i++
	}
}

// extension parses an element and the whitespace after it.
func (p *extParser) extension() (Extension, bool) {
	var e Extension
	if e.Name = p.token(); e.Name == "" {
		return e, false
	}
	for {
		p.ows()
		if p.done() || p.s[p.i] != ';' {
			return e, true
		}
		p.i++
		p.ows()
		var prm Param
		if prm.Name = p.token(); prm.Name == "" {
			return e, false // ";" with no parameter after it
		}
		p.ows()
		if !p.done() && p.s[p.i] == '=' {
			p.i++
			p.ows()
			if !p.done() && p.s[p.i] == '"' {
				v, ok := p.quoted()
				if !ok || !syntax.IsToken(v) {
					return e, false
				}
				prm.Value = v
			} else if prm.Value = p.token(); prm.Value == "" {
				return e, false // "=" with no value
			}
			prm.HasValue = true
		}
		e.Params = append(e.Params, prm)
	}
}

// token returns the token at p.i, or "" when there is none.
func (p *extParser) token() string {
	start := p.i
	for p.i < len(p.s) && syntax.IsTchar[p.s[p.i]] {
		p.i++
	}
	return p.s[start:p.i]
}

// quoted parses a quoted-string (RFC 7230 §3.2.6) at p.i and returns it unescaped:
//
//	quoted-string = DQUOTE *( qdtext / quoted-pair ) DQUOTE
//	qdtext        = HTAB / SP / %x21 / %x23-5B / %x5D-7E / obs-text
//	quoted-pair   = "\" ( HTAB / SP / VCHAR / obs-text )
func (p *extParser) quoted() (string, bool) {
	p.i++ // the opening quote
	start := p.i
	var b []byte // the unescaped value, once there is an escape
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch {
		case c == '"':
			p.i++
			if b == nil {
				return p.s[start : p.i-1], true
			}
			return string(b), true
		case c == '\\':
			if p.i+1 == len(p.s) || !isQuotable(p.s[p.i+1]) {
				return "", false
			}
			if b == nil {
				b = []byte(p.s[start:p.i])
			}
			b = append(b, p.s[p.i+1])
			p.i += 2
		case isQuotable(c):
			if b != nil {
				b = append(b, c)
			}
			p.i++
		default:
			return "", false // a control character
		}
	}
	return "", false // no closing quote
}

// isQuotable reports whether c may appear in a quoted-string, as qdtext or escaped: HTAB, SP,
// VCHAR and obs-text (a '"' or '\' must be escaped; the caller has taken those out).
func isQuotable(c byte) bool { return c == '\t' || c >= ' ' && c != 0x7f }
