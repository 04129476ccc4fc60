package h2

import "github.com/dwellhttp/dwell/internal/syntax"

// A request's field block as RFC 9113 §8 asks a server to check it. A block that breaks a rule
// is malformed: a stream error PROTOCOL_ERROR (§8.1.1), which ends the request and not the
// connection. The checker keeps no name or value: the caller copies what it keeps.

// RequestCheck follows one request's fields (or its trailers) as they are decoded: Field for
// each, then End. The zero value checks a request's header block; set Trailers for a trailer
// block, ConnectProtocol when the server announced SETTINGS_ENABLE_CONNECT_PROTOCOL (RFC 8441).
type RequestCheck struct {
	StreamID        uint32
	Trailers        bool
	ConnectProtocol bool

	seen    uint8 // the pseudo-header fields seen (pseudo* bits)
	path    uint8 // the form of :path (path* values)
	regular bool  // a regular field has been seen: no pseudo-header field may follow
	connect bool  // :method is CONNECT
	options bool  // :method is OPTIONS
}

// The pseudo-header fields of a request (RFC 9113 §8.3.1; :protocol, RFC 8441 §4).
const (
	pseudoMethod uint8 = 1 << iota
	pseudoScheme
	pseudoAuthority
	pseudoPath
	pseudoProtocol
)

// The forms of a :path (RFC 9112 §3.2 names them): origin-form, which starts with "/", and the
// asterisk-form of a server-wide OPTIONS are a request's (RFC 9113 §8.3.1); anything else —
// empty, the absolute-form of a request to a proxy, an authority — is not.
const (
	pathOther uint8 = iota
	pathOrigin
	pathAsterisk
)

func (c *RequestCheck) malformed(reason string) error {
	return streamErr(c.StreamID, ProtocolError, reason)
}

// Field checks one field: its name's and value's characters (§8.2.1), a connection-specific
// field (§8.2.2), and a pseudo-header field's place, name and uniqueness (§8.3).
func (c *RequestCheck) Field(name, value []byte) error {
	if len(name) == 0 {
		return c.malformed("empty field name")
	}
	if name[0] == ':' {
		return c.pseudo(name, value)
	}
	c.regular = true
	for _, b := range name {
		if !syntax.IsTchar[b] || 'A' <= b && b <= 'Z' {
			return c.malformed("field name with an upper-case letter or a character a token does not allow")
		}
	}
	if err := c.checkValue(value); err != nil {
		return err
	}
	switch string(name) {
	case "connection", "proxy-connection", "keep-alive", "transfer-encoding", "upgrade":
		return c.malformed("connection-specific field " + string(name))
	case "te":
		if string(value) != "trailers" {
			return c.malformed("TE other than trailers")
		}
	}
	return nil
}

func (c *RequestCheck) pseudo(name, value []byte) error {
	if c.Trailers {
		return c.malformed("pseudo-header field in trailers")
	}
	if c.regular {
		return c.malformed("pseudo-header field after a regular field")
	}
	var bit uint8
	switch string(name) {
	case ":method":
		bit = pseudoMethod
		c.connect = string(value) == "CONNECT"
		c.options = string(value) == "OPTIONS"
	case ":scheme":
		bit = pseudoScheme
	case ":authority":
		bit = pseudoAuthority
	case ":path":
		bit = pseudoPath
		switch {
		case len(value) > 0 && value[0] == '/':
			c.path = pathOrigin
		case string(value) == "*":
			c.path = pathAsterisk
		default:
			c.path = pathOther
		}
	case ":protocol":
		if !c.ConnectProtocol {
			return c.malformed(":protocol without SETTINGS_ENABLE_CONNECT_PROTOCOL")
		}
		bit = pseudoProtocol
	default:
		return c.malformed("unknown pseudo-header field " + string(name))
	}
	if c.seen&bit != 0 {
		return c.malformed("pseudo-header field " + string(name) + " twice")
	}
	c.seen |= bit
	return c.checkValue(value)
}

// checkValue refuses a value with NUL, CR or LF, or with whitespace at either end (§8.2.1).
func (c *RequestCheck) checkValue(v []byte) error {
	for _, b := range v {
		if b == 0 || b == '\r' || b == '\n' {
			return c.malformed("field value with NUL, CR or LF")
		}
	}
	if n := len(v); n > 0 && (v[0] == ' ' || v[0] == '\t' || v[n-1] == ' ' || v[n-1] == '\t') {
		return c.malformed("field value with whitespace at an end")
	}
	return nil
}

// End checks what the block as a whole must hold (§8.3.1, §8.5; RFC 8441 §4): :method, :scheme
// and :path for a request, :authority and neither of the others for CONNECT, all four with
// :protocol for an extended CONNECT; nothing for trailers. A :path is origin-form, or "*" for
// OPTIONS alone (an extended CONNECT's too is origin-form): an absolute-form one would carry an
// authority of its own, which would override :authority — and so the Host field checked against
// it — for whatever reads the request's target.
func (c *RequestCheck) End() error {
	if c.Trailers {
		return nil
	}
	switch {
	case c.seen&pseudoMethod == 0:
		return c.malformed("no :method")
	case c.seen&pseudoProtocol != 0:
		if !c.connect || c.seen != pseudoMethod|pseudoScheme|pseudoAuthority|pseudoPath|pseudoProtocol {
			return c.malformed(":protocol without CONNECT and all of :scheme, :authority and :path")
		}
	case c.connect:
		if c.seen != pseudoMethod|pseudoAuthority {
			return c.malformed("CONNECT without :authority, or with :scheme or :path")
		}
		return nil
	case c.seen&pseudoScheme == 0 || c.seen&pseudoPath == 0:
		return c.malformed("no :scheme or no :path")
	}
	switch {
	case c.path == pathOrigin:
	case c.path == pathAsterisk && c.options:
	case c.path == pathAsterisk:
		return c.malformed(":path * on a method other than OPTIONS")
	default:
		return c.malformed(":path neither origin-form nor *")
	}
	return nil
}
