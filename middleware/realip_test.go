package middleware_test

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/core/coretest"
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

// TestRealIP: the one field named counts, and only from a trusted peer — here the test itself,
// from 127.0.0.1; the others are ignored, whatever a client puts in them.
func TestRealIP(t *testing.T) {
	loopback := []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
	other := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}
	const xff, fwd, xri = "", "Forwarded", "X-Real-IP"
	cases := []struct {
		name    string
		trusted []netip.Prefix
		header  string
		fields  string
		want    string
	}{
		{"no fields", loopback, xff, "", "127.0.0.1"},
		{"xff", loopback, xff, "X-Forwarded-For: 6.6.6.6, 203.0.113.7\r\n", "203.0.113.7"},
		{"xff lines", loopback, xff, "X-Forwarded-For: 203.0.113.7\r\nX-Forwarded-For: 127.0.0.2\r\n", "203.0.113.7"},
		{"xff spoof in the first line", loopback, xff, "X-Forwarded-For: 6.6.6.6\r\nX-Forwarded-For: 203.0.113.7\r\n", "203.0.113.7"},
		// The client's own Forwarded, passed on by an nginx that appends to X-Forwarded-For.
		{"xff, client's Forwarded ignored", loopback, xff, "Forwarded: for=1.2.3.4\r\nX-Forwarded-For: 203.0.113.7\r\n", "203.0.113.7"},
		{"xff, client's X-Real-IP ignored", loopback, xff, "X-Real-IP: 1.2.3.4\r\n", "127.0.0.1"},
		{"xff named in lower case", loopback, "x-forwarded-for", "Forwarded: for=1.2.3.4\r\nx-forwarded-for: 203.0.113.7\r\n", "203.0.113.7"},
		{"xff, IPv6 client", loopback, xff, "X-Forwarded-For: [2001:db8::7]:5000\r\n", "2001:db8::7"},
		{"xff, mapped client", loopback, xff, "X-Forwarded-For: ::ffff:203.0.113.7\r\n", "203.0.113.7"},
		{"xff malformed", loopback, xff, "X-Forwarded-For: 6.6.6.6, not-an-address\r\n", "127.0.0.1"},
		{"forwarded", loopback, fwd, "Forwarded: for=203.0.113.8;proto=https\r\n", "203.0.113.8"},
		{"forwarded, client's xff ignored", loopback, fwd, "X-Forwarded-For: 1.2.3.4\r\nForwarded: for=\"[2001:db8::9]:1\"\r\n", "2001:db8::9"},
		{"forwarded walked", loopback, fwd, "Forwarded: for=6.6.6.6, for=203.0.113.8\r\nForwarded: for=127.0.0.9\r\n", "203.0.113.8"},
		{"forwarded absent", loopback, fwd, "X-Forwarded-For: 203.0.113.7\r\n", "127.0.0.1"},
		{"forwarded malformed", loopback, fwd, "Forwarded: for=[2001:db8::9]\r\nX-Forwarded-For: 203.0.113.7\r\n", "127.0.0.1"},
		{"x-real-ip", loopback, xri, "X-Real-IP: 203.0.113.9\r\nX-Forwarded-For: 1.2.3.4\r\nForwarded: for=1.2.3.5\r\n", "203.0.113.9"},
		{"x-real-ip absent", loopback, xri, "X-Forwarded-For: 203.0.113.7\r\n", "127.0.0.1"},
		{"x-real-ip, IPv6", loopback, xri, "X-Real-IP: 2001:db8::9\r\n", "2001:db8::9"},
		{"x-real-ip, trusted address", loopback, xri, "X-Real-IP: 127.0.0.5\r\n", "127.0.0.5"},
		{"x-real-ip, a list", loopback, xri, "X-Real-IP: 6.6.6.6, 203.0.113.9\r\n", "127.0.0.1"},
		{"x-real-ip, lines: the last", loopback, xri, "X-Real-IP: 6.6.6.6\r\nX-Real-IP: 203.0.113.9\r\n", "203.0.113.9"},
		{"x-real-ip, last line malformed", loopback, xri, "X-Real-IP: 203.0.113.9\r\nX-Real-IP: unknown\r\n", "127.0.0.1"},
		{"x-real-ip, empty", loopback, xri, "X-Real-IP: \r\n", "127.0.0.1"},
		{"x-real-ip, a name", loopback, xri, "X-Real-IP: example.com\r\n", "127.0.0.1"},
		{"cf-connecting-ip", loopback, "CF-Connecting-IP", "cf-connecting-ip: 203.0.113.10\r\nX-Forwarded-For: 1.2.3.4\r\n", "203.0.113.10"},
		{"true-client-ip", loopback, "true-client-ip", "True-Client-IP: 203.0.113.11\r\n", "203.0.113.11"},
		{"fly-client-ip", loopback, "Fly-Client-IP", "Fly-Client-IP: 2001:db8::11\r\nX-Real-IP: 1.2.3.4\r\n", "2001:db8::11"},
		{"untrusted peer", other, xff, "X-Forwarded-For: 203.0.113.7\r\nForwarded: for=203.0.113.8\r\n", "127.0.0.1"},
		{"untrusted peer, forwarded", other, fwd, "Forwarded: for=203.0.113.8\r\n", "127.0.0.1"},
		{"untrusted peer, x-real-ip", other, xri, "X-Real-IP: 203.0.113.9\r\n", "127.0.0.1"},
		{"nobody trusted", nil, xff, "X-Forwarded-For: 203.0.113.7\r\n", "127.0.0.1"},
		{"mapped prefix", []netip.Prefix{netip.MustParsePrefix("::ffff:127.0.0.0/104")}, xff, "X-Forwarded-For: 203.0.113.7\r\n", "203.0.113.7"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			mw := middleware.RealIP(middleware.RealIPOptions{Trusted: tc.trusted, Header: tc.header})
			_, addr := coretest.Serve(t, mw(showClientIP), core.Options{})
			c := dialRaw(t, addr)
			c.Send("GET / HTTP/1.1\r\nHost: h\r\n" + tc.fields + "\r\n")
			if _, got := c.Response("GET"); got != tc.want {
				t.Fatalf("client %q, want %q", got, tc.want)
			}
		})
	}
	t.Run("without RealIP", func(t *testing.T) {
		_, addr := coretest.Serve(t, showClientIP, core.Options{})
		c := dialRaw(t, addr)
		c.Send("GET / HTTP/1.1\r\nHost: h\r\nX-Forwarded-For: 203.0.113.7\r\n\r\n")
		if _, got := c.Response("GET"); got != "127.0.0.1" {
			t.Fatalf("client %q", got)
		}
	})
}

// TestRealIPPeers: IPv6 peers, and IPv4 peers on a dual-stack listener, which the socket
// reports mapped into IPv6 (::ffff:127.0.0.1) unless the poller unmaps them first (the epoll
// one does, the portable one does not): either way they are trusted by their IPv4 prefix, or
// by its mapped form, and reported unmapped.
func TestRealIPPeers(t *testing.T) {
	v4 := []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
	v6 := []netip.Prefix{netip.MustParsePrefix("::1/128")}
	mapped := []netip.Prefix{netip.MustParsePrefix("::ffff:127.0.0.1/128")}
	cases := []struct {
		name    string
		listen  string // an address for net.Listen
		dial    string // the host to dial
		trusted []netip.Prefix
		header  string
		fields  string
		want    string
	}{
		{"IPv6 peer trusted", "[::1]:0", "::1", v6, "", "X-Forwarded-For: 203.0.113.7\r\n", "203.0.113.7"},
		{"IPv6 peer, IPv6 client", "[::1]:0", "::1", v6, "X-Real-IP", "X-Real-IP: 2001:db8::7\r\n", "2001:db8::7"},
		{"IPv6 peer untrusted", "[::1]:0", "::1", v4, "", "X-Forwarded-For: 203.0.113.7\r\n", "::1"},
		{"IPv4 peer of a dual-stack listener, IPv4 prefix", "[::]:0", "127.0.0.1", v4, "", "X-Forwarded-For: 203.0.113.7\r\n", "203.0.113.7"},
		{"IPv4 peer of a dual-stack listener, mapped prefix", "[::]:0", "127.0.0.1", mapped, "Forwarded", "Forwarded: for=203.0.113.8\r\n", "203.0.113.8"},
		{"IPv4 peer of a dual-stack listener, untrusted", "[::]:0", "127.0.0.1", v6, "", "X-Forwarded-For: 203.0.113.7\r\n", "127.0.0.1"},
		{"IPv4 peer of a dual-stack listener, no field", "[::]:0", "127.0.0.1", v4, "", "", "127.0.0.1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			mw := middleware.RealIP(middleware.RealIPOptions{Trusted: tc.trusted, Header: tc.header})
			port := serveListener(t, tc.listen, mw(func(c *core.Ctx) {
				c.WriteString(c.RemoteAddr().Addr().String() + " ")
				showClientIP(c)
			}))
			c := dialRaw(t, net.JoinHostPort(tc.dial, port))
			c.Send("GET / HTTP/1.1\r\nHost: h\r\n" + tc.fields + "\r\n")
			_, body := c.Response("GET")
			peer, got, _ := strings.Cut(body, " ")
			t.Logf("peer %s", peer)
			if got != tc.want {
				t.Fatalf("client %q, want %q", got, tc.want)
			}
		})
	}
}

// serveListener serves h on a listener of addr until the test ends and returns its port; it
// skips the test where the system cannot listen there (no IPv6).
func serveListener(t *testing.T, addr string, h core.Handler) string {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("cannot listen on %s: %v", addr, err)
	}
	s := core.NewServer(h, core.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	errc := make(chan error, 1)
	go func() { errc <- s.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		s.Shutdown(ctx)
		if err := <-errc; err != core.ErrServerClosed {
			t.Errorf("Serve returned %v", err)
		}
	})
	return strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
}

// TestRealIPHeaderName: a Header that is no field name fails when RealIP is built, saying
// what to write.
func TestRealIPHeaderName(t *testing.T) {
	for _, h := range []string{"X Real IP", "X-Real-IP:", "X-Forwarded-For\r\n", "é"} {
		msg := catchPanic(func() { middleware.RealIP(middleware.RealIPOptions{Header: h}) })
		if !strings.Contains(msg, "is not a header field name") || !strings.Contains(msg, `"X-Real-IP"`) {
			t.Errorf("Header %q: panic %q", h, msg)
		}
	}
	for _, h := range []string{"", "Forwarded", "x-real-ip", "CF-Connecting-IP"} {
		if msg := catchPanic(func() { middleware.RealIP(middleware.RealIPOptions{Header: h}) }); msg != "" {
			t.Errorf("Header %q: panic %q", h, msg)
		}
	}
}
