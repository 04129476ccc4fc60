package interop

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// Go's HTTP/2 clients against dwell: golang.org/x/net/http2's Transport, and net/http's own
// Transport (whose HTTP/2 is a copy of x/net's, bundled with the standard library, at its own
// version), each over h2c with prior knowledge and over TLS. Every request of a client goes
// over one connection, which the test counts: its dialer is the only way to one.

// A goH2Client makes one of the clients for a port, its dials counted in dials.
type goH2Client struct {
	name   string
	secure bool
	new    func(s *h2Server, dials *atomic.Int64) http.RoundTripper
}

// countingDial dials TCP, counting the connections.
func countingDial(dials *atomic.Int64) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		dials.Add(1)
		var d net.Dialer
		return d.DialContext(ctx, network, addr)
	}
}

var goH2Clients = []goH2Client{
	{"x/net/http2 h2c", false, xnetH2C},
	{"x/net/http2 tls", true, xnetTLS},
	{"net/http h2c", false, func(_ *h2Server, dials *atomic.Int64) http.RoundTripper {
		// Unencrypted HTTP/2 alone: http:// URLs go over h2c with prior knowledge.
		var p http.Protocols
		p.SetUnencryptedHTTP2(true)
		return &http.Transport{Protocols: &p, DialContext: countingDial(dials)}
	}},
	{"net/http tls", true, func(s *h2Server, dials *atomic.Int64) http.RoundTripper {
		// A dialer and a TLS configuration of our own turn HTTP/2 off unless asked for.
		return &http.Transport{ForceAttemptHTTP2: true, DialContext: countingDial(dials),
			TLSClientConfig: &tls.Config{RootCAs: s.roots}}
	}},
}

// goRequest runs a request and returns its response with the body read.
func goRequest(rt http.RoundTripper, method, url string, reqBody []byte) (*http.Response, []byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), h2SafetyNet)
	defer cancel()
	var r io.Reader
	if reqBody != nil {
		r = bytes.NewReader(reqBody)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, r)
	if err != nil {
		return nil, nil, err
	}
	resp, err := rt.RoundTrip(req)
	if err != nil {
		return nil, nil, fmt.Errorf("%s %s: %w", method, url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, nil, fmt.Errorf("%s %s: reading the body after %d bytes: %w", method, url, len(b), err)
	}
	return resp, b, nil
}

// goDo is goRequest for the test's goroutine, failing the test on an error.
func goDo(t *testing.T, rt http.RoundTripper, method, url string, reqBody []byte) (*http.Response, []byte) {
	t.Helper()
	resp, b, err := goRequest(rt, method, url, reqBody)
	if err != nil {
		t.Fatal(err)
	}
	return resp, b
}

// TestGoClientsH2: each of Go's clients gets HTTP/2 from dwell, over h2c and over TLS (ALPN
// "h2"): a known body, whose handler saw HTTP/2.0; a response of 1 MiB streamed in flushed
// pieces, in order; a POST of 6 MiB echoed as it arrives, which crosses the server's windows
// (64 KiB a stream, 1 MiB the connection) one way and the client's (4 MiB a stream) the other,
// both ways at once; and 200 requests from 20 goroutines at once, half of them POSTs with
// bodies of their own up to 70 KB, each answered with its own body. All of it over one
// connection.
func TestGoClientsH2(t *testing.T) {
	s := serveH2(t)
	for _, gc := range goH2Clients {
		t.Run(gc.name, func(t *testing.T) {
			var dials atomic.Int64
			rt := gc.new(s, &dials)
			t.Cleanup(func() {
				if c, ok := rt.(interface{ CloseIdleConnections() }); ok {
					c.CloseIdleConnections()
				}
			})
			url := func(path string) string { return s.url(gc.secure, path) }

			t.Run("hello", func(t *testing.T) {
				resp, b := goDo(t, rt, "GET", url("/hello"), nil)
				if resp.StatusCode != 200 || resp.ProtoMajor != 2 || string(b) != helloBody("HTTP/2.0") ||
					resp.ContentLength != int64(len(b)) {
					t.Errorf("%s %d, Content-Length %d, body %q", resp.Proto, resp.StatusCode, resp.ContentLength, b)
				}
			})

			t.Run("info", func(t *testing.T) {
				want := "proto=HTTP/2.0 scheme=http no TLS\n"
				if gc.secure {
					want = "proto=HTTP/2.0 scheme=https version=TLS 1.3 alpn=h2 sni= resumed=false "
				}
				resp, b := goDo(t, rt, "GET", url("/info"), nil)
				if resp.ProtoMajor != 2 || !strings.HasPrefix(string(b), want) {
					t.Errorf("%s: %q, want %q...", resp.Proto, b, want)
				}
			})

			t.Run("stream", func(t *testing.T) {
				resp, b := goDo(t, rt, "GET", url("/stream"), nil)
				if resp.StatusCode != 200 || resp.ProtoMajor != 2 {
					t.Errorf("%s %d", resp.Proto, resp.StatusCode)
				}
				sameBytes(t, "the streamed body", b, streamBytes(0, h2StreamSize))
			})

			t.Run("large POST", func(t *testing.T) {
				in := randomBody(6 << 20)
				resp, b := goDo(t, rt, "POST", url("/echo"), in)
				if resp.StatusCode != 200 || resp.ProtoMajor != 2 {
					t.Errorf("%s %d", resp.Proto, resp.StatusCode)
				}
				sameBytes(t, "the echo", b, in)
			})

			t.Run("concurrent", func(t *testing.T) {
				const goroutines, each = 20, 10
				var wg sync.WaitGroup
				for g := range goroutines {
					wg.Go(func() {
						// Not goDo: t.Fatal is for the test's goroutine.
						for i := range each {
							n := g*each + i
							method, path, in := "GET", "/hello", []byte(nil)
							want := []byte(helloBody("HTTP/2.0"))
							if n%2 == 1 {
								in = fmt.Appendf(nil, "request %d|", n)
								in = append(in, randomBody(n*349%70000)...)
								method, path, want = "POST", "/echo", in
							}
							resp, b, err := goRequest(rt, method, url(path), in)
							if err != nil {
								t.Errorf("request %d: %v", n, err)
								return
							}
							if resp.StatusCode != 200 || resp.ProtoMajor != 2 {
								t.Errorf("request %d: %s %d", n, resp.Proto, resp.StatusCode)
							}
							sameBytes(t, fmt.Sprintf("request %d's body", n), b, want)
						}
					})
				}
				wg.Wait()
			})

			if n := dials.Load(); n != 1 {
				t.Errorf("%d connections, want every request over one", n)
			}
		})
	}
}

// TestGoClientHTTP1: with HTTP/2 served, a client that speaks HTTP/1.1 alone still gets
// HTTP/1.1 on both ports: on the plaintext one, whose requests are told from HTTP/2's preface
// by their first bytes; on the TLS one, where ALPN chooses http/1.1, all it offers.
func TestGoClientHTTP1(t *testing.T) {
	s := serveH2(t)
	forEachPort(t, func(t *testing.T, secure bool) {
		var p http.Protocols
		p.SetHTTP1(true)
		// The offer is made explicit: by itself net/http offers nothing when it speaks
		// HTTP/1.1 alone.
		rt := &http.Transport{Protocols: &p, TLSClientConfig: &tls.Config{RootCAs: s.roots, NextProtos: []string{"http/1.1"}}}
		t.Cleanup(rt.CloseIdleConnections)

		resp, b := goDo(t, rt, "GET", s.url(secure, "/hello"), nil)
		if resp.StatusCode != 200 || resp.ProtoMajor != 1 || resp.ProtoMinor != 1 || string(b) != helloBody("HTTP/1.1") {
			t.Errorf("%s %d %q", resp.Proto, resp.StatusCode, b)
		}
		want := "proto=HTTP/1.1 scheme=http no TLS\n"
		if secure {
			want = "proto=HTTP/1.1 scheme=https version=TLS 1.3 alpn=http/1.1 sni= resumed=false "
		}
		if resp, b := goDo(t, rt, "GET", s.url(secure, "/info"), nil); resp.ProtoMajor != 1 || !strings.HasPrefix(string(b), want) {
			t.Errorf("%s: %q, want %q...", resp.Proto, b, want)
		}
		in := randomBody(300 << 10)
		resp, b = goDo(t, rt, "POST", s.url(secure, "/echo"), in)
		if resp.StatusCode != 200 || resp.ProtoMajor != 1 {
			t.Errorf("echo: %s %d", resp.Proto, resp.StatusCode)
		}
		sameBytes(t, "the echo", b, in)
	})
}
