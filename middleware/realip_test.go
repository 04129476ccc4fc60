package middleware_test

import (
	"net/netip"
	"testing"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/middleware"
)

// showClientIP answers the client's address as the middleware found it, both ways.
func showClientIP(c *core.Ctx) {
	a := middleware.ClientIP(c)
	if v, ok := c.Context().Value(middleware.ClientIPKey).(netip.Addr); ok && v != a {
		c.WriteString("context disagrees")
		return
	}
	c.WriteString(a.String())
}

// TestRealIP: the forwarding fields count only from a trusted peer — here the test itself,
// from 127.0.0.1 — every line of them, Forwarded before X-Forwarded-For.
func TestRealIP(t *testing.T) {
	loopback := []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
	other := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}
	cases := []struct {
		name    string
		trusted []netip.Prefix
		fields  string
		want    string
	}{
		{"no fields", loopback, "", "127.0.0.1"},
		{"xff", loopback, "X-Forwarded-For: 6.6.6.6, 203.0.113.7\r\n", "203.0.113.7"},
		{"xff lines", loopback, "X-Forwarded-For: 203.0.113.7\r\nX-Forwarded-For: 127.0.0.2\r\n", "203.0.113.7"},
		{"xff spoof in the first line", loopback, "X-Forwarded-For: 6.6.6.6\r\nX-Forwarded-For: 203.0.113.7\r\n", "203.0.113.7"},
		{"forwarded", loopback, "Forwarded: for=203.0.113.8;proto=https\r\n", "203.0.113.8"},
		{"forwarded first", loopback, "X-Forwarded-For: 203.0.113.7\r\nForwarded: for=\"[2001:db8::9]:1\"\r\n", "2001:db8::9"},
		{"forwarded malformed", loopback, "Forwarded: for=[2001:db8::9]\r\nX-Forwarded-For: 203.0.113.7\r\n", "127.0.0.1"},
		{"untrusted peer", other, "X-Forwarded-For: 203.0.113.7\r\nForwarded: for=203.0.113.8\r\n", "127.0.0.1"},
		{"nobody trusted", nil, "X-Forwarded-For: 203.0.113.7\r\n", "127.0.0.1"},
		{"mapped prefix", []netip.Prefix{netip.MustParsePrefix("::ffff:127.0.0.0/104")}, "X-Forwarded-For: 203.0.113.7\r\n", "203.0.113.7"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			addr := serve(t, middleware.RealIP(tc.trusted)(showClientIP), core.Options{})
			c := dialRaw(t, addr)
			c.Send("GET / HTTP/1.1\r\nHost: h\r\n" + tc.fields + "\r\n")
			if _, got := c.Response("GET"); got != tc.want {
				t.Fatalf("client %q, want %q", got, tc.want)
			}
		})
	}
	t.Run("without RealIP", func(t *testing.T) {
		addr := serve(t, showClientIP, core.Options{})
		c := dialRaw(t, addr)
		c.Send("GET / HTTP/1.1\r\nHost: h\r\nX-Forwarded-For: 203.0.113.7\r\n\r\n")
		if _, got := c.Response("GET"); got != "127.0.0.1" {
			t.Fatalf("client %q", got)
		}
	})
}
