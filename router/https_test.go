package router_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/core/coretest"
	"github.com/dwellhttp/dwell/router"
)

// TestRedirectToHTTPS: each request, sent as raw bytes so that the Host and the target are
// exactly the test's, gets its redirect to https (the method's code, the Location made of the
// host without its port, the HTTPS port unless 443, the target as received) or 400.
func TestRedirectToHTTPS(t *testing.T) {
	_, addr443 := coretest.Serve(t, router.RedirectToHTTPS("443"), core.Options{})
	_, addrDefault := coretest.Serve(t, router.RedirectToHTTPS(""), core.Options{})
	_, addr8443 := coretest.Serve(t, router.RedirectToHTTPS("8443"), core.Options{})
	for _, tc := range []struct {
		name    string
		addr    string
		request string // the header without its final blank line, or with it and a body
		status  int
		loc     string
	}{
		{"GET", addr443, "GET / HTTP/1.1\r\nHost: example.com", 301, "https://example.com/"},
		{"plain port removed", addr443, "GET / HTTP/1.1\r\nHost: example.com:80", 301, "https://example.com/"},
		{"other plain port removed", addr443, "GET /a HTTP/1.1\r\nHost: example.com:8080", 301, "https://example.com/a"},
		{"empty port removed", addr443, "GET /a HTTP/1.1\r\nHost: example.com:", 301, "https://example.com/a"},
		{"empty port means 443", addrDefault, "GET /a HTTP/1.1\r\nHost: example.com:80", 301, "https://example.com/a"},
		{"HTTPS port added", addr8443, "GET /a HTTP/1.1\r\nHost: example.com:8080", 301, "https://example.com:8443/a"},
		{"HTTPS port added to a host without one", addr8443, "GET / HTTP/1.1\r\nHost: example.com", 301, "https://example.com:8443/"},
		{"query kept", addr443, "GET /search?q=a+b&x=%2F HTTP/1.1\r\nHost: example.com", 301, "https://example.com/search?q=a+b&x=%2F"},
		{"escapes kept", addr443, "GET /a%20b/c%2Fd HTTP/1.1\r\nHost: example.com", 301, "https://example.com/a%20b/c%2Fd"},
		{"double slash stays a path", addr443, "GET //evil.example/x HTTP/1.1\r\nHost: example.com", 301, "https://example.com//evil.example/x"},
		{"HEAD", addr443, "HEAD /h HTTP/1.1\r\nHost: example.com", 301, "https://example.com/h"},
		{"POST keeps its method", addr443, "POST /form HTTP/1.1\r\nHost: example.com\r\nContent-Length: 3\r\n\r\nabc", 308, "https://example.com/form"},
		{"PUT keeps its method", addr8443, "PUT /x?y HTTP/1.1\r\nHost: example.com\r\nContent-Length: 0", 308, "https://example.com:8443/x?y"},
		{"DELETE keeps its method", addr443, "DELETE /x HTTP/1.1\r\nHost: example.com", 308, "https://example.com/x"},
		{"OPTIONS with a path", addr443, "OPTIONS /x HTTP/1.1\r\nHost: example.com", 308, "https://example.com/x"},
		{"IPv4", addr8443, "GET / HTTP/1.1\r\nHost: 192.0.2.1:80", 301, "https://192.0.2.1:8443/"},
		{"IPv6", addr8443, "GET / HTTP/1.1\r\nHost: [2001:db8::1]:80", 301, "https://[2001:db8::1]:8443/"},
		{"IPv6 without a port", addr443, "GET / HTTP/1.1\r\nHost: [::1]", 301, "https://[::1]/"},
		{"case kept", addr443, "GET / HTTP/1.1\r\nHost: Example.COM", 301, "https://Example.COM/"},
		{"trailing dot", addr443, "GET / HTTP/1.1\r\nHost: example.com.", 301, "https://example.com./"},
		{"absolute form", addr443, "GET http://example.com:80/p?q=1 HTTP/1.1\r\nHost: example.com", 301, "https://example.com/p?q=1"},
		{"absolute form without a path", addr8443, "GET http://example.com HTTP/1.1\r\nHost: example.com", 301, "https://example.com:8443/"},

		{"HTTP/1.0 without Host", addr443, "GET / HTTP/1.0", 400, ""},
		{"empty Host", addr443, "GET / HTTP/1.1\r\nHost: ", 400, ""},
		{"port not a number", addr443, "GET / HTTP/1.1\r\nHost: example.com:https", 400, ""},
		{"userinfo", addr443, "GET / HTTP/1.1\r\nHost: user@example.com", 400, ""},
		{"path in Host", addr443, "GET / HTTP/1.1\r\nHost: example.com/evil", 400, ""},
		{"query in Host", addr443, "GET / HTTP/1.1\r\nHost: example.com?x", 400, ""},
		{"empty label", addr443, "GET / HTTP/1.1\r\nHost: example..com", 400, ""},
		{"leading dot", addr443, "GET / HTTP/1.1\r\nHost: .example.com", 400, ""},
		{"only a port", addr443, "GET / HTTP/1.1\r\nHost: :80", 400, ""},
		{"IPv6 unclosed", addr443, "GET / HTTP/1.1\r\nHost: [::1", 400, ""},
		{"IPv6 unbracketed", addr443, "GET / HTTP/1.1\r\nHost: ::1", 400, ""},
		{"IPv4 in brackets", addr443, "GET / HTTP/1.1\r\nHost: [192.0.2.1]", 400, ""},
		{"IPv6 with a zone", addr443, "GET / HTTP/1.1\r\nHost: [fe80::1%25eth0]", 400, ""},
		{"junk after the brackets", addr443, "GET / HTTP/1.1\r\nHost: [::1]x", 400, ""},
		{"not ASCII", addr443, "GET / HTTP/1.1\r\nHost: exämple.com", 400, ""},
		{"asterisk", addr443, "OPTIONS * HTTP/1.1\r\nHost: example.com", 400, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cn := coretest.Dial(t, tc.addr)
			head, body, _ := strings.Cut(tc.request, "\r\n\r\n")
			cn.Send(head + "\r\n\r\n" + body)
			method, _, _ := strings.Cut(tc.request, " ")
			resp, body := cn.Response(method)
			if resp.StatusCode != tc.status {
				t.Fatalf("%d %q, want %d", resp.StatusCode, body, tc.status)
			}
			if got := resp.Header.Get("Location"); got != tc.loc {
				t.Errorf("Location %q, want %q", got, tc.loc)
			}
			if tc.status == 400 {
				return // from the handler or from the server's parser, which refuses some hosts first
			}
			// No body; a HEAD's has no length either (it would have to be GET's, RFC 9110 §8.6).
			if body != "" || resp.ContentLength > 0 || method != "HEAD" && resp.ContentLength != 0 {
				t.Errorf("a redirect with a body: %d %q", resp.ContentLength, body)
			}
			// The connection stays open for the next request, the body of the first read.
			cn.Send("GET /next HTTP/1.1\r\nHost: example.com\r\n\r\n")
			if resp, _ := cn.Response("GET"); resp.StatusCode != 301 || !strings.HasSuffix(resp.Header.Get("Location"), "/next") {
				t.Errorf("next request on the connection: %d %q", resp.StatusCode, resp.Header.Get("Location"))
			}
		})
	}
}

// TestRedirectToHTTPSPort: an HTTPS port that is not a port number panics when the handler is
// made.
func TestRedirectToHTTPSPort(t *testing.T) {
	for _, port := range []string{"0", "65536", "https", ":8443", "-1", "+443", "0443", " 443", "8443 "} {
		func() {
			defer func() {
				if v := recover(); v == nil || !strings.Contains(v.(string), "RedirectToHTTPS") {
					t.Errorf("RedirectToHTTPS(%q): panic %v", port, v)
				}
			}()
			router.RedirectToHTTPS(port)
		}()
	}
	for _, port := range []string{"", "1", "443", "8443", "65535"} {
		router.RedirectToHTTPS(port) // no panic
	}
}

// TestRedirectToHTTPSAddr: the handler is made before the HTTPS server listens on a port of
// its choosing (port 0, as in the issue: RedirectToHTTPS("0") panics); until it listens the
// plain listener answers 503, and then redirects to the port it got, which a client following
// the redirect reaches over TLS.
func TestRedirectToHTTPSAddr(t *testing.T) {
	cert := coretest.NewCertificate(t)
	secure := router.New()
	secure.GET("/docs/*page", func(c *core.Ctx) { c.WriteString(c.Scheme() + " " + c.Param("page") + " " + c.RawQuery()) })
	https := core.NewServer(secure.Handler(), core.Options{Addr: "127.0.0.1:0",
		TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert.TLS}}, Logger: slog.New(slog.DiscardHandler)})

	_, plainAddr := coretest.Serve(t, router.RedirectToHTTPSAddr(https.Addr), core.Options{})
	cn := coretest.Dial(t, plainAddr)
	cn.Send("GET /docs/a?b=1 HTTP/1.1\r\nHost: example.com\r\n\r\n")
	if resp, body := cn.Response("GET"); resp.StatusCode != 503 || resp.Header.Get("Location") != "" || resp.Close {
		t.Fatalf("before the HTTPS server listens: %d %q, Location %q, close %v", resp.StatusCode, body, resp.Header.Get("Location"), resp.Close)
	}

	if err := https.Listen(); err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() { errc <- https.ListenAndServe() }()
	t.Cleanup(func() {
		https.Shutdown(context.Background())
		if err := <-errc; err != core.ErrServerClosed {
			t.Errorf("ListenAndServe: %v", err)
		}
	})
	port := https.Addr().(*net.TCPAddr).Port
	for _, tc := range []struct{ request, loc string }{
		{"GET /docs/a?b=1 HTTP/1.1\r\nHost: example.com:8080", "https://example.com:" + strconv.Itoa(port) + "/docs/a?b=1"},
		{"POST /docs/a HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0", "https://127.0.0.1:" + strconv.Itoa(port) + "/docs/a"},
	} {
		cn.Send(tc.request + "\r\n\r\n")
		method, _, _ := strings.Cut(tc.request, " ")
		if resp, body := cn.Response(method); resp.StatusCode/100 != 3 || resp.Header.Get("Location") != tc.loc {
			t.Errorf("%s: %d %q, Location %q, want %q", method, resp.StatusCode, body, resp.Header.Get("Location"), tc.loc)
		}
	}

	// A browser: http:// to the plain listener, redirected to the HTTPS server.
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: cert.Pool}}, Timeout: coretest.Patience}
	resp, err := client.Get("http://" + plainAddr + "/docs/guide?x=1")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(body) != "https /guide x=1" || resp.Request.URL.Scheme != "https" {
		t.Errorf("followed: %d %q at %v", resp.StatusCode, body, resp.Request.URL)
	}
}

// TestPortOf: what RedirectToHTTPSAddr makes of the addresses it may be given.
func TestPortOf(t *testing.T) {
	var nilTCP *net.TCPAddr
	for _, tc := range []struct {
		addr net.Addr
		want string
	}{
		{nil, ""},
		{nilTCP, ""},
		{&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)}, ""},
		{&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 443}, "443"},
		{&net.TCPAddr{IP: net.IPv6loopback, Port: 8443}, "8443"},
		{&net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8443}, "8443"}, // any address with a port
		{&net.UnixAddr{Name: "/run/https.sock", Net: "unix"}, ""},
	} {
		h := router.RedirectToHTTPSAddr(func() net.Addr { return tc.addr })
		_, addr := coretest.Serve(t, h, core.Options{})
		cn := coretest.Dial(t, addr)
		cn.Send("GET /p HTTP/1.1\r\nHost: example.com\r\n\r\n")
		resp, _ := cn.Response("GET")
		switch tc.want {
		case "":
			if resp.StatusCode != 503 {
				t.Errorf("%v: %d, want 503", tc.addr, resp.StatusCode)
			}
		case "443":
			if loc := resp.Header.Get("Location"); loc != "https://example.com/p" {
				t.Errorf("%v: Location %q", tc.addr, loc)
			}
		default:
			if loc := resp.Header.Get("Location"); loc != "https://example.com:"+tc.want+"/p" {
				t.Errorf("%v: Location %q", tc.addr, loc)
			}
		}
	}
	if msg := catchPanicText(func() { router.RedirectToHTTPSAddr(nil) }); !strings.Contains(msg, "RedirectToHTTPSAddr") {
		t.Errorf("nil addr: panic %q", msg)
	}
	if msg := catchPanicText(func() { router.RedirectToHTTPS("0") }); !strings.Contains(msg, "RedirectToHTTPSAddr(srv.Addr)") {
		t.Errorf("port 0: panic %q, which should say what to use instead", msg)
	}
}

// TestRedirectToHTTPSAddrKept: addr is asked until it reports a port, and not after.
func TestRedirectToHTTPSAddrKept(t *testing.T) {
	var calls atomic.Int32
	var port atomic.Int32
	h := router.RedirectToHTTPSAddr(func() net.Addr {
		calls.Add(1)
		if p := port.Load(); p != 0 {
			return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: int(p)}
		}
		return nil
	})
	_, addr := coretest.Serve(t, h, core.Options{})
	cn := coretest.Dial(t, addr)
	for i, want := range []struct {
		port   int32 // what addr reports from this request on
		status int
		loc    string
		calls  int32
	}{
		{0, 503, "", 1},
		{0, 503, "", 2},
		{8443, 301, "https://example.com:8443/", 3},
		{9443, 301, "https://example.com:8443/", 3}, // kept: not asked again
	} {
		port.Store(want.port)
		cn.Send("GET / HTTP/1.1\r\nHost: example.com\r\n\r\n")
		resp, _ := cn.Response("GET")
		if resp.StatusCode != want.status || resp.Header.Get("Location") != want.loc || calls.Load() != want.calls {
			t.Errorf("request %d: %d %q after %d calls, want %d %q after %d", i, resp.StatusCode, resp.Header.Get("Location"),
				calls.Load(), want.status, want.loc, want.calls)
		}
	}
}

// catchPanicText returns what f panics with, as text, or "" when it returns.
func catchPanicText(f func()) (msg string) {
	defer func() {
		if v := recover(); v != nil {
			msg = fmt.Sprint(v)
		}
	}()
	f()
	return ""
}

// The HTTPS server listens on a port it picks (port 0): the plain listener's handler is made
// first, and reads the port when a request comes.
func ExampleRedirectToHTTPSAddr() {
	https := core.NewServer(func(c *core.Ctx) { c.WriteString("secure") }, core.Options{Addr: "127.0.0.1:0"}) // and TLSConfig
	plain := router.New()
	plain.GET("/healthz", func(c *core.Ctx) { c.WriteString("ok") })
	plain.NotFound = router.RedirectToHTTPSAddr(https.Addr)
	url, stop := start(plain.Handler())
	defer stop()

	get("GET", url+"/docs/") // https has not called Listen yet
	if err := https.Listen(); err != nil {
		panic(err)
	}
	defer https.Shutdown(context.Background())
	req, _ := http.NewRequest("GET", url+"/docs/", nil)
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		panic(err)
	}
	resp.Body.Close()
	fmt.Println(resp.Status, resp.Header.Get("Location") == "https://"+https.Addr().String()+"/docs/")
	// Output:
	// 503 Service Unavailable "503 service unavailable: the HTTPS server is not listening yet\n"
	// 301 Moved Permanently true
}

// A plain listener that sends its clients to the HTTPS server, keeping one route on
// plaintext (a health check for the load balancer).
func ExampleRedirectToHTTPS() {
	plain := router.New()
	plain.GET("/healthz", func(c *core.Ctx) { c.WriteString("ok") })
	plain.NotFound = router.RedirectToHTTPS("8443")
	url, stop := start(plain.Handler())
	defer stop()

	get("GET", url+"/healthz")
	get("GET", url+"/docs/?page=2", "Location")
	get("POST", url+"/login", "Location")
	// Output:
	// 200 OK "ok"
	// 301 Moved Permanently Location: https://127.0.0.1:8443/docs/?page=2
	// 308 Permanent Redirect Location: https://127.0.0.1:8443/login
}
