package middleware

import (
	"net/netip"
	"strings"

	"github.com/dwellhttp/dwell/core"
)

// clientIPKey is the type of ClientIPKey.
type clientIPKey struct{}

// ClientIPKey is the key under which RealIP stores the client's address, a netip.Addr:
// c.Context().Value(middleware.ClientIPKey) returns it to code that has only the context.
var ClientIPKey any = clientIPKey{}

// RealIP finds the address of the client behind reverse proxies. A request whose peer is one
// of the trusted proxies (an address in one of the prefixes, such as 10.0.0.0/8 for the load
// balancers' network) is taken to carry the addresses it came through, in the Forwarded field
// (RFC 7239, its for= parameters) or, when there is none, in X-Forwarded-For; every field line
// counts, in order. The list is read from the right, the proxies' end: each trusted proxy
// vouches for the address on its left, so the client is the first address, from the right,
// that is not a trusted proxy. Anything a client put further left is never believed, and the
// fields of a request whose peer is not trusted are ignored altogether: its client is the
// peer. An entry that is not an address ("unknown", an obfuscated "_name", garbage) ends the
// walk: the client is then the last address known, the proxy that could not tell.
//
// ClientIP reads the result. With no trusted prefixes RealIP trusts nobody, and every client
// is its peer.
func RealIP(trusted []netip.Prefix) func(core.Handler) core.Handler {
	trusted = append([]netip.Prefix(nil), trusted...)
	for i, p := range trusted {
		trusted[i] = netip.PrefixFrom(p.Addr().Unmap(), p.Bits()-unmapBits(p.Addr())).Masked()
	}
	isTrusted := func(a netip.Addr) bool {
		for _, p := range trusted {
			if p.Contains(a) {
				return true
			}
		}
		return false
	}
	return func(next core.Handler) core.Handler {
		return func(c *core.Ctx) {
			peer := c.RemoteAddr().Addr().Unmap()
			if peer.IsValid() && isTrusted(peer) {
				c.SetValue(ClientIPKey, clientBehind(c, peer, isTrusted))
			}
			next(c)
		}
	}
}

// unmapBits is how many leading bits an IPv4-mapped IPv6 prefix spends on the mapping.
func unmapBits(a netip.Addr) int {
	if a.Is4In6() {
		return 96
	}
	return 0
}

// ClientIP returns the client's address as RealIP found it, or the peer's address
// (c.RemoteAddr) when RealIP did not run or the peer was not a trusted proxy. IPv4 addresses
// are always returned as such, never mapped into IPv6. It may be called from the handler or
// its continuation, until the request ends.
func ClientIP(c *core.Ctx) netip.Addr {
	if a, ok := c.Value(ClientIPKey).(netip.Addr); ok {
		return a
	}
	return c.RemoteAddr().Addr().Unmap()
}

// clientBehind walks the forwarding fields of a request from a trusted peer.
func clientBehind(c *core.Ctx, peer netip.Addr, isTrusted func(netip.Addr) bool) netip.Addr {
	forwarded, xff := c.HeaderAll("Forwarded"), c.HeaderAll("X-Forwarded-For")
	var hops []string
	if forwarded != nil {
		for _, v := range forwarded {
			var ok bool
			if hops, ok = appendForwardedFor(hops, v); !ok {
				return peer // a malformed field: none of it can be believed
			}
		}
	} else {
		for _, v := range xff {
			for h := range strings.SplitSeq(v, ",") {
				hops = append(hops, strings.TrimSpace(h))
			}
		}
	}
	return walkHops(hops, peer, isTrusted)
}

// walkHops returns the first address from the right of hops that is not trusted, starting
// from peer, a trusted proxy; the leftmost when all are trusted; the last address known when an
// entry is not an address.
func walkHops(hops []string, peer netip.Addr, isTrusted func(netip.Addr) bool) netip.Addr {
	client := peer
	for i := len(hops) - 1; i >= 0; i-- {
		a, ok := parseNode(hops[i])
		if !ok {
			break
		}
		client = a
		if !isTrusted(a) {
			break
		}
	}
	return client
}

// parseNode parses a node as X-Forwarded-For and Forwarded's for= give it: an IPv4 address or
// an IPv6 one, bracketed or not, either with an optional port. Names, "unknown", obfuscated
// identifiers and scoped IPv6 addresses are not addresses.
func parseNode(s string) (netip.Addr, bool) {
	if strings.HasPrefix(s, "[") {
		end := strings.IndexByte(s, ']')
		if end < 0 || end+1 < len(s) && s[end+1] != ':' {
			return netip.Addr{}, false
		}
		s = s[1:end]
	} else if strings.Count(s, ":") == 1 {
		s, _, _ = strings.Cut(s, ":") // an IPv4 address with its port
	}
	a, err := netip.ParseAddr(s)
	if err != nil || a.Zone() != "" {
		return netip.Addr{}, false
	}
	return a.Unmap(), true
}

// appendForwardedFor appends the for= value of each element of a Forwarded field value (RFC
// 7239 §4) to hops, in order; an element without one appends "", which is no address. It
// reports false for a value that does not parse.
func appendForwardedFor(hops []string, v string) ([]string, bool) {
	p := forwardedParser{s: v}
	for {
		p.skipSpace()
		if p.done() {
			return hops, true
		}
		if p.peek() == ',' { // an empty element, which the list syntax allows
			p.i++
			continue
		}
		forNode := ""
		for {
			p.skipSpace()
			if !p.done() && p.peek() != ';' && p.peek() != ',' {
				name, value, ok := p.pair()
				if !ok {
					return hops, false
				}
				if strings.EqualFold(name, "for") {
					forNode = value
				}
				p.skipSpace()
			}
			if p.done() || p.peek() == ',' {
				break
			}
			if p.peek() != ';' {
				return hops, false
			}
			p.i++
		}
		hops = append(hops, forNode)
		if !p.done() {
			p.i++ // the ','
		}
	}
}

// forwardedParser reads a Forwarded field value.
type forwardedParser struct {
	s string
	i int
}

func (p *forwardedParser) done() bool { return p.i >= len(p.s) }
func (p *forwardedParser) peek() byte { return p.s[p.i] }

func (p *forwardedParser) skipSpace() {
	for !p.done() && (p.peek() == ' ' || p.peek() == '\t') {
		p.i++
	}
}

// pair reads token "=" ( token / quoted-string ).
func (p *forwardedParser) pair() (name, value string, ok bool) {
	name = p.token()
	if name == "" || p.done() || p.peek() != '=' {
		return "", "", false
	}
	p.i++
	if !p.done() && p.peek() == '"' {
		value, ok = p.quoted()
		return name, value, ok
	}
	value = p.token()
	return name, value, value != ""
}

func (p *forwardedParser) token() string {
	start := p.i
	for !p.done() && isTokenChar(p.peek()) {
		p.i++
	}
	return p.s[start:p.i]
}

// quoted reads a quoted-string, undoing its backslash escapes.
func (p *forwardedParser) quoted() (string, bool) {
	p.i++ // the opening quote
	var b strings.Builder
	for !p.done() {
		ch := p.peek()
		p.i++
		switch {
		case ch == '"':
			return b.String(), true
		case ch == '\\':
			if p.done() {
				return "", false
			}
			b.WriteByte(p.peek())
			p.i++
		case ch < 0x20 && ch != '\t' || ch == 0x7f:
			return "", false
		default:
			b.WriteByte(ch)
		}
	}
	return "", false
}

// isTokenChar reports whether ch is a tchar of RFC 9110 §5.6.2.
func isTokenChar(ch byte) bool {
	switch {
	case 'a' <= ch && ch <= 'z', 'A' <= ch && ch <= 'Z', '0' <= ch && ch <= '9':
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~", ch) >= 0
}
