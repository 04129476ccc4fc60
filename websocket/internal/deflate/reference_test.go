package deflate

import (
	"strconv"
	"strings"

	"github.com/dwellhttp/dwell/internal/syntax"
)

// The parser and negotiation that Negotiate replaced, which built a []Extension and then judged
// it: kept word for word (renamed) as the oracle that FuzzNegotiate and the tests compare
// Negotiate with, since it states the syntax and the rules of acceptance plainly, one step at a
// time. refParse followed by refNegotiate is what Negotiate must do, allocations aside.

// refExtension is one element of a Sec-WebSocket-Extensions list: an extension's name and its
// parameters, in the order they were written. Names compare without regard to case
// (strings.EqualFold), as RFC 6455 §9.1 makes them tokens.
type refExtension struct {
	Name   string
	Params []refParam
}

// refParam is one parameter of an extension: a name, and a value when HasValue. A value written as
// a quoted-string is held unquoted.
type refParam struct {
	Name     string
	Value    string
	HasValue bool
}

// refParse parses the Sec-WebSocket-Extensions field lines of a handshake, every line's
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
func refParse(values []string) ([]refExtension, error) {
	var exts []refExtension
	for _, v := range values {
		p := refParser{s: v}
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
// tokens, as everything refParse returns is.
func (e refExtension) String() string {
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

// refParser walks one field line.
type refParser struct {
	s string
	i int
}

func (p *refParser) done() bool { return p.i == len(p.s) }

// ows skips optional whitespace (RFC 7230 §3.2.3: SP and HTAB).
func (p *refParser) ows() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t') {
		p.i++
	}
}

// extension parses an element and the whitespace after it.
func (p *refParser) extension() (refExtension, bool) {
	var e refExtension
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
		var prm refParam
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
func (p *refParser) token() string {
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
func (p *refParser) quoted() (string, bool) {
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
			if p.i+1 == len(p.s) || !refQuotable(p.s[p.i+1]) {
				return "", false
			}
			if b == nil {
				b = []byte(p.s[start:p.i])
			}
			b = append(b, p.s[p.i+1])
			p.i += 2
		case refQuotable(c):
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

// refQuotable reports whether c may appear in a quoted-string, as qdtext or escaped: HTAB, SP,
// VCHAR and obs-text (a '"' or '\' must be escaped; the caller has taken those out).
func refQuotable(c byte) bool { return c == '\t' || c >= ' ' && c != 0x7f }

// refNegotiate picks the first permessage-deflate offer among offers that the server can accept
// and writes the response, by the rules Negotiate's doc states.
func refNegotiate(offers []refExtension, allowContextTakeover bool) (agreed Params, response string, ok bool) {
	for _, o := range offers {
		if !strings.EqualFold(o.Name, Name) {
			continue
		}
		asked, echoBits, ok := refAccept(o)
		if !ok {
			continue
		}
		agreed = asked
		agreed.ServerNoContextTakeover = asked.ServerNoContextTakeover || !allowContextTakeover
		agreed.ClientNoContextTakeover = asked.ClientNoContextTakeover || !allowContextTakeover
		var b strings.Builder
		b.WriteString(Name)
		if agreed.ServerNoContextTakeover {
			b.WriteString("; server_no_context_takeover")
		}
		if agreed.ClientNoContextTakeover {
			b.WriteString("; client_no_context_takeover")
		}
		if echoBits {
			b.WriteString("; server_max_window_bits=")
			b.WriteString(strconv.Itoa(agreed.ServerMaxWindowBits))
		}
		return agreed, b.String(), true
	}
	return Params{}, "", false
}

// refAccept reads one permessage-deflate offer: what the client asked for, whether it named
// server_max_window_bits (which the response must then echo), and whether the offer is one the
// server can accept.
func refAccept(o refExtension) (asked Params, echoBits, ok bool) {
	asked.ServerMaxWindowBits, asked.ClientMaxWindowBits = 15, 15
	var seen [4]bool
	for _, p := range o.Params {
		var i int
		switch {
		case strings.EqualFold(p.Name, "server_no_context_takeover"):
			i = 0
			asked.ServerNoContextTakeover = true
			if p.HasValue {
				return Params{}, false, false // §7.1.1.1: the parameter has no value
			}
		case strings.EqualFold(p.Name, "client_no_context_takeover"):
			i = 1
			asked.ClientNoContextTakeover = true
			if p.HasValue {
				return Params{}, false, false // §7.1.1.2: no value
			}
		case strings.EqualFold(p.Name, "server_max_window_bits"):
			i = 2
			bits, valid := refWindowBits(p.Value)
			if !p.HasValue || !valid {
				return Params{}, false, false // §7.1.2.1: a value, 8 to 15
			}
			asked.ServerMaxWindowBits, echoBits = bits, true
		case strings.EqualFold(p.Name, "client_max_window_bits"):
			i = 3
			if p.HasValue { // §7.1.2.2: no value, or 8 to 15
				bits, valid := refWindowBits(p.Value)
				if !valid {
					return Params{}, false, false
				}
				asked.ClientMaxWindowBits = bits
			}
		default:
			return Params{}, false, false // §7.1: a parameter not defined for an offer declines it
		}
		if seen[i] {
			return Params{}, false, false // §7.1: a parameter named twice declines the offer
		}
		seen[i] = true
	}
	return asked, echoBits, true
}

// refWindowBits parses a window size (§7.1.2.1, §7.1.2.2): a decimal integer from 8 to 15, with
// no leading zeros.
func refWindowBits(v string) (int, bool) {
	switch {
	case len(v) == 1 && v[0] >= '8' && v[0] <= '9':
		return int(v[0] - '0'), true
	case len(v) == 2 && v[0] == '1' && v[1] >= '0' && v[1] <= '5':
		return 10 + int(v[1]-'0'), true
	}
	return 0, false
}

// reference is Negotiate as refParse and refNegotiate did it.
func reference(values []string, allowContextTakeover bool) (Params, string, bool, error) {
	offers, err := refParse(values)
	if err != nil {
		return Params{}, "", false, err
	}
	p, resp, ok := refNegotiate(offers, allowContextTakeover)
	return p, resp, ok, nil
}
