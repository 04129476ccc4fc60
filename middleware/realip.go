package middleware

import (
	"net/netip"
	"strconv"
	"strings"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/internal/syntax"
)

// clientIPKey is the type of ClientIPKey.
type clientIPKey struct{}

// ClientIPKey is the key under which RealIP stores the client's address, a netip.Addr:
// c.Context().Value(middleware.ClientIPKey) returns it to code that has only the context.
var ClientIPKey any = clientIPKey{}

// RealIPOptions configures RealIP. The zero value trusts no proxy: every client is its peer.
type RealIPOptions struct {
	// Trusted lists the proxies in front, as prefixes: 10.0.0.0/8 for the load balancers'
	// network, 127.0.0.1/32 for a proxy on the same machine. Only a request whose peer is in one
	// of them has its Header read. An IPv4-mapped prefix (::ffff:10.0.0.0/104) means the IPv4
	// one, since peers and addresses are compared unmapped. Nil trusts nobody, and every client
	// is its peer.
	Trusted []netip.Prefix

	// Header names the one field the trusted proxies write the client's address in, compared
	// without regard to case. "" means "X-Forwarded-For". "X-Forwarded-For" and "Forwarded" are
	// lists each proxy appends to; any other name ("X-Real-IP", "CF-Connecting-IP",
	// "True-Client-IP", "Fly-Client-IP") is a field that holds one address, which the proxy
	// overwrites. RealIP describes each, with the proxy settings that go with it. Every other
	// forwarding field is ignored, since a proxy passes on untouched what a client put in a
	// field the proxy does not write. A name that is not a field name (an RFC 9110 token)
	// panics.
	Header string
}

// RealIP finds the address of the client behind reverse proxies, in the one field that
// o.Header names, and ClientIP reads it. A request whose peer is not one of o.Trusted keeps
// its peer as its client, whatever its fields say; so does one from a trusted peer without
// the field.
//
// Name the field that the proxy next to dwell writes on every request: what it does not
// write, a client does. "X-Forwarded-For", the default, is a comma-separated list to which
// each proxy appends the address the request came from, as nginx does with
//
//	proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
//
// and as AWS Application Load Balancers do by default (Trusted: the VPC's prefix). Google
// Cloud's Application Load Balancers append the client's address and then their forwarding
// rule's own (Trusted: that address, and Google's front ends, 35.191.0.0/16 and
// 130.211.0.0/22). Every field line counts, in order.
//
// "Forwarded" (RFC 7239) is the same list in its for= parameters, as nginx writes it afresh,
// dropping what the client sent, with
//
//	proxy_set_header Forwarded "for=\"$remote_addr\"";
//
// (quoted, since an IPv6 address is not a token: unquoted, the field would not parse). The
// cloud load balancers above write X-Forwarded-For alone: behind one, leave Header empty. A
// Forwarded field that does not parse is not believed at all, and the client is then the
// peer.
//
// Any other name is a field that holds one address, which the proxy overwrites: "X-Real-IP"
// with nginx's
//
//	proxy_set_header X-Real-IP $remote_addr;
//
// "CF-Connecting-IP" behind Cloudflare (and "True-Client-IP", when its Managed Transform adds
// it), which writes it on every request (Trusted: Cloudflare's published ranges);
// "Fly-Client-IP" on Fly.io. Its value, an address with or without a port, is the client,
// with no list to walk. A proxy that overwrites the field leaves one line; when there are
// several, the last is read, since a proxy that adds a line adds it after those it received.
// A value that is not one address — a list, a name, "unknown", nothing — is not believed, and
// the client is then the peer.
//
// A list is read from the right, the proxies' end: each trusted proxy vouches for the address
// on its left, so the client is the first address, from the right, that is not a trusted
// proxy; the leftmost when all are. Anything a client put further left is never believed. An
// entry that is not an address ("unknown", an obfuscated "_name", garbage) ends the walk: the
// client is then the last address known, the proxy that could not tell.
//
// A field the peer passes on from further away is only as good as the peer's own check of
// whom it came from: CF-Connecting-IP through an nginx of one's own is the client's word
// unless that nginx takes requests from Cloudflare alone.
//
// RealIP panics when o.Header is not a field name, which no request could carry.
func RealIP(o RealIPOptions) func(core.Handler) core.Handler {
	trusted := make([]netip.Prefix, len(o.Trusted))
	for i, p := range o.Trusted {
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
	header := o.Header
	if header == "" {
		header = "X-Forwarded-For"
	}
	if !syntax.IsToken(header) {
		panic("dwell: RealIP: Header " + strconv.Quote(header) + " is not a header field name; " +
			`write the field the proxy sets, such as "X-Forwarded-For" or "X-Real-IP"`)
	}
	var clientBehind func(lines []string, peer netip.Addr) netip.Addr
	switch {
	case strings.EqualFold(header, "X-Forwarded-For"):
		clientBehind = func(lines []string, peer netip.Addr) netip.Addr {
			return walkHops(forwardedForHops(lines), peer, isTrusted)
		}
	case strings.EqualFold(header, "Forwarded"):
		clientBehind = func(lines []string, peer netip.Addr) netip.Addr {
			hops, ok := forwardedHops(lines)
			if !ok {
				return peer // a malformed field: none of it can be believed
			}
			return walkHops(hops, peer, isTrusted)
		}
	default:
		clientBehind = singleAddress
	}
	return func(next core.Handler) core.Handler {
		return func(c *core.Ctx) {
			peer := c.RemoteAddr().Addr().Unmap()
			if peer.IsValid() && isTrusted(peer) {
				var fields []string
				for v := range c.Bytes().HeaderValues(header) {
					fields = append(fields, string(v))
				}
				c.SetValue(ClientIPKey, clientBehind(fields, peer))
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

// forwardedForHops splits the lines of an X-Forwarded-For field into its entries, in order.
func forwardedForHops(lines []string) []string {
	var hops []string
	for _, v := range lines {
		for h := range strings.SplitSeq(v, ",") {
			hops = append(hops, strings.TrimSpace(h))
		}
	}
	return hops
}

// forwardedHops returns the for= values of the lines of a Forwarded field, in order, or false
// when one does not parse.
func forwardedHops(lines []string) ([]string, bool) {
	var hops []string
	for _, v := range lines {
		var ok bool
		if hops, ok = appendForwardedFor(hops, v); !ok {
			return nil, false
		}
	}
	return hops, true
}

// singleAddress returns the address in the last line of a single-address field, or peer when
// there is none or it is not one address. A comma is refused rather than split: it means that
// something appended to the field as to a list instead of overwriting it, and which entry a
// trusted proxy wrote is then a guess.
func singleAddress(lines []string, peer netip.Addr) netip.Addr {
	if len(lines) == 0 {
		return peer
	}
	v := strings.TrimSpace(lines[len(lines)-1])
	if strings.IndexByte(v, ',') >= 0 {
		return peer
	}
	if a, ok := parseNode(v); ok {
		return a
	}
	return peer
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
// reports false for a value that does not parse, or whose element has two for= (which of
// them a proxy wrote is a guess).
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
		forNode, hasFor := "", false
		for {
			p.skipSpace()
			if !p.done() && p.peek() != ';' && p.peek() != ',' {
				name, value, ok := p.pair()
				if !ok {
					return hops, false
				}
				if strings.EqualFold(name, "for") {
					if hasFor {
						return hops, false // §4: a parameter occurs once in an element
					}
					forNode, hasFor = value, true
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
	for !p.done() && syntax.IsTchar[p.peek()] {
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
