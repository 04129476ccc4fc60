package middleware

import (
	"net/netip"
	"reflect"
	"strings"
	"testing"
)

// TestAppendForwardedFor: the for= value of each element, in order, through quoting, other
// parameters and several field lines; malformed values refused whole.
func TestAppendForwardedFor(t *testing.T) {
	cases := []struct {
		in   string
		want []string // nil: refused
	}{
		{`for=192.0.2.60`, []string{"192.0.2.60"}},
		{`for=192.0.2.60;proto=http;by=203.0.113.43`, []string{"192.0.2.60"}},
		{`proto=https; FOR="[2001:db8:cafe::17]:4711"`, []string{"[2001:db8:cafe::17]:4711"}},
		{`for=192.0.2.43, for=198.51.100.17`, []string{"192.0.2.43", "198.51.100.17"}},
		{`for=unknown, for=_hidden,for="10.0.0.1"`, []string{"unknown", "_hidden", "10.0.0.1"}},
		{`by=10.0.0.1, for=1.2.3.4`, []string{"", "1.2.3.4"}},
		{`for="a\"b;c,d", for=1.2.3.4`, []string{`a"b;c,d`, "1.2.3.4"}},
		{`, ,for=1.2.3.4,`, []string{"1.2.3.4"}},
		{`for=[::1]`, nil},       // unquoted brackets are not a token
		{`for="1.2.3.4`, nil},    // unterminated
		{`for=1.2.3.4 x=1`, nil}, // a pair without its ';'
		{`for`, nil},
		{`=1.2.3.4`, nil},
		{`for=`, nil},
	}
	for _, tc := range cases {
		got, ok := appendForwardedFor(nil, tc.in)
		if !ok {
			got = nil
		}
		if tc.want == nil && ok || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: got %q (%v), want %q", tc.in, got, ok, tc.want)
		}
	}
}

// TestWalkHops: the client is the first untrusted address from the right; a peer's own list is
// never believed past it; an entry that is not an address stops the walk.
func TestWalkHops(t *testing.T) {
	trusted := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("fd00::/8")}
	isTrusted := func(a netip.Addr) bool {
		for _, p := range trusted {
			if p.Contains(a) {
				return true
			}
		}
		return false
	}
	peer := netip.MustParseAddr("10.0.0.1")
	cases := []struct {
		hops, want string
	}{
		{"", "10.0.0.1"},
		{"203.0.113.7", "203.0.113.7"},
		{"6.6.6.6, 203.0.113.7", "203.0.113.7"},           // the client's own claim is left of it
		{"6.6.6.6, 203.0.113.7, 10.1.1.1", "203.0.113.7"}, // through a second proxy
		{"10.2.2.2, 10.1.1.1", "10.2.2.2"},                // all trusted: the leftmost
		{"6.6.6.6, unknown, 10.1.1.1", "10.1.1.1"},        // a proxy that did not know
		{"203.0.113.7:8080", "203.0.113.7"},               // with a port
		{"[2001:db8::1]:443", "2001:db8::1"},              // bracketed, with a port
		{"2001:db8::1", "2001:db8::1"},                    // bare IPv6
		{"::ffff:203.0.113.7", "203.0.113.7"},             // mapped, unmapped
		{"fe80::1%eth0", "10.0.0.1"},                      // scoped: not an address
		{"[2001:db8::1]x", "10.0.0.1"},                    // junk after the bracket
		{"6.6.6.6, fd00::5, [fd00::6]:1", "6.6.6.6"},      // IPv6 proxies
		{"example.com, 10.1.1.1", "10.1.1.1"},             // a name
		{"1.2.3.4, 203.0.113.7, , 10.1.1.1", "10.1.1.1"},  // an empty entry
		{"1.2.3.4.5, 10.1.1.1", "10.1.1.1"},               // not an address
		{"1.2.3.4:80:90, 10.1.1.1", "10.1.1.1"},           // not an address
		{"203.0.113.7,10.1.1.1,10.1.1.2", "203.0.113.7"},  // no spaces
		{" 203.0.113.7 ,\t10.1.1.1 ", "203.0.113.7"},      // spaces trimmed
		{"_hidden, 10.1.1.1", "10.1.1.1"},                 // obfuscated
		{"203.0.113.7, 10.1.1.1, 6.6.6.6", "6.6.6.6"},     // an untrusted hop next to the peer
		{strings.Repeat("10.0.0.9, ", 100) + "10.1.1.1", "10.0.0.9"},
	}
	for _, tc := range cases {
		var hops []string
		if tc.hops != "" {
			for _, h := range strings.Split(tc.hops, ",") {
				hops = append(hops, strings.TrimSpace(h))
			}
		}
		if got := walkHops(hops, peer, isTrusted); got.String() != tc.want {
			t.Errorf("%q: got %v, want %s", tc.hops, got, tc.want)
		}
	}
}

// TestSingleAddress: the last line of a single-address field, when it is one address; the
// peer otherwise.
func TestSingleAddress(t *testing.T) {
	peer := netip.MustParseAddr("10.0.0.1")
	cases := []struct {
		lines []string
		want  string
	}{
		{nil, "10.0.0.1"},
		{[]string{"203.0.113.7"}, "203.0.113.7"},
		{[]string{" 203.0.113.7\t"}, "203.0.113.7"},
		{[]string{"203.0.113.7:8080"}, "203.0.113.7"},
		{[]string{"2001:db8::1"}, "2001:db8::1"},
		{[]string{"[2001:db8::1]:443"}, "2001:db8::1"},
		{[]string{"::ffff:203.0.113.7"}, "203.0.113.7"},
		{[]string{"6.6.6.6", "203.0.113.7"}, "203.0.113.7"}, // the nearest proxy's line
		{[]string{"203.0.113.7", ""}, "10.0.0.1"},
		{[]string{"6.6.6.6, 203.0.113.7"}, "10.0.0.1"}, // a list: which one is a guess
		{[]string{"203.0.113.7,"}, "10.0.0.1"},
		{[]string{""}, "10.0.0.1"},
		{[]string{"unknown"}, "10.0.0.1"},
		{[]string{"_hidden"}, "10.0.0.1"},
		{[]string{"example.com"}, "10.0.0.1"},
		{[]string{"fe80::1%eth0"}, "10.0.0.1"},
		{[]string{"for=203.0.113.7"}, "10.0.0.1"},
	}
	for _, tc := range cases {
		if got := singleAddress(tc.lines, peer); got.String() != tc.want {
			t.Errorf("%q: got %v, want %s", tc.lines, got, tc.want)
		}
	}
}

// TestForwardedHops: the for= values of every Forwarded line, in order, one malformed line
// refusing all; the entries of every X-Forwarded-For line, trimmed, in order.
func TestForwardedHops(t *testing.T) {
	hops, ok := forwardedHops([]string{"for=1.2.3.4, for=5.6.7.8", "for=10.0.0.2;proto=https"})
	if want := []string{"1.2.3.4", "5.6.7.8", "10.0.0.2"}; !ok || !reflect.DeepEqual(hops, want) {
		t.Errorf("got %q (%v), want %q", hops, ok, want)
	}
	if hops, ok := forwardedHops([]string{"for=1.2.3.4", "for=[::1]"}); ok || hops != nil {
		t.Errorf("a malformed line: got %q (%v)", hops, ok)
	}
	if hops, ok := forwardedHops([]string{"for=1.2.3.4;FOR=5.6.7.8"}); ok || hops != nil {
		t.Errorf("an element with two for=: got %q (%v)", hops, ok)
	}
	got := forwardedForHops([]string{"6.6.6.6, 203.0.113.7", " 10.0.0.2 "})
	if want := []string{"6.6.6.6", "203.0.113.7", "10.0.0.2"}; !reflect.DeepEqual(got, want) {
		t.Errorf("X-Forwarded-For: got %q, want %q", got, want)
	}
}

// FuzzForwarded: the Forwarded parser never panics, and what it accepts has at most as many
// elements as the value has commas, plus one.
func FuzzForwarded(f *testing.F) {
	for _, s := range []string{`for=192.0.2.60;proto=http`, `for="[2001:db8::1]:4711", for=unknown`,
		`for="a\"b", by=x`, `;;, ,for=1.2.3.4`, `for="\`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		hops, ok := appendForwardedFor(nil, s)
		if ok && len(hops) > strings.Count(s, ",")+1 {
			t.Fatalf("%q: %d elements", s, len(hops))
		}
	})
}

// FuzzParseNode: a node that parses is a valid address without a zone, never an IPv4-mapped one.
func FuzzParseNode(f *testing.F) {
	for _, s := range []string{"1.2.3.4", "1.2.3.4:80", "[::1]:80", "::1", "::ffff:1.2.3.4", "fe80::1%lo", "unknown", "[::1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a, ok := parseNode(s)
		if ok && (!a.IsValid() || a.Zone() != "" || a.Is4In6()) {
			t.Fatalf("%q: %v", s, a)
		}
	})
}
