//lint:file-ignore SA1019 x/net/http2's Transport is deprecated for net/http's, but it is a client of its own that programs still use: on Go 1.26 it is x/net's own implementation (from Go 1.27 on, a wrapper of net/http's), tested here beside net/http's.

package interop

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"sync/atomic"

	"golang.org/x/net/http2"
)

// xnetH2C is golang.org/x/net/http2's Transport speaking h2c with prior knowledge: AllowHTTP
// lets it send http:// requests, and its "TLS" dialer is a plain TCP one.
func xnetH2C(_ *h2Server, dials *atomic.Int64) http.RoundTripper {
	return &http2.Transport{AllowHTTP: true,
		DialTLSContext: func(ctx context.Context, network, addr string, _ *tls.Config) (net.Conn, error) {
			return countingDial(dials)(ctx, network, addr)
		}}
}

// xnetTLS is golang.org/x/net/http2's Transport over TLS. cfg is the Transport's own: ALPN
// "h2", the server's name (127.0.0.1, which the certificate names), the test's roots.
func xnetTLS(s *h2Server, dials *atomic.Int64) http.RoundTripper {
	return &http2.Transport{TLSClientConfig: &tls.Config{RootCAs: s.roots},
		DialTLSContext: func(ctx context.Context, network, addr string, cfg *tls.Config) (net.Conn, error) {
			dials.Add(1)
			d := tls.Dialer{Config: cfg}
			return d.DialContext(ctx, network, addr)
		}}
}
