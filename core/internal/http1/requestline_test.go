package http1

import (
	"bufio"
	"net"
	"testing"

	"github.com/dwellhttp/dwell/core/internal/serve"
	"github.com/dwellhttp/dwell/core/internal/wire"
	"github.com/dwellhttp/dwell/internal/testclient"
)

// Malformed HTTP/1.x request lines, each with the reason its 400 gives. Every one names an
// HTTP/1.x version somewhere in its line, so none can be a damaged HTTP/2 preface.
var malformedRequestLines = []struct {
	name, raw, reason string
}{
	{"two spaces before the version", "GET /  HTTP/1.1\r\nHost: h\r\n\r\n", "malformed request line"},
	{"junk before the method", "Extra lineGET / HTTP/1.1\r\nHost: h\r\n\r\n", "malformed request line"},
	{"space in the target", "GET /a b HTTP/1.1\r\nHost: h\r\n\r\n", "malformed request line"},
	{"two spaces after the method", "GET  / HTTP/1.1\r\nHost: h\r\n\r\n", "malformed request line"},
	{"space before the method", " GET / HTTP/1.1\r\nHost: h\r\n\r\n", "malformed request line"},
	{"tab after the method", "GET\t/ HTTP/1.1\r\nHost: h\r\n\r\n", "malformed request line"},
	{"tab before the version", "GET /\tHTTP/1.1\r\nHost: h\r\n\r\n", "invalid request-target"},
	{"missing version", "GET /\r\nHost: h\r\n\r\n", "malformed request line"},
	{"empty version", "GET / \r\nHost: h\r\n\r\n", "malformed HTTP version"},
	{"lower-case version", "GET / http/1.1\r\nHost: h\r\n\r\n", "malformed HTTP version"},
	{"mixed-case version", "GET / Http/1.0\r\nHost: h\r\n\r\n", "malformed HTTP version"},
	{"version with trailing junk", "GET / HTTP/1.1x\r\nHost: h\r\n\r\n", "malformed HTTP version"},
	{"version then a word", "GET / HTTP/1.1 extra\r\nHost: h\r\n\r\n", "malformed HTTP version"},
	{"version without its minor", "GET / HTTP/1.\r\nHost: h\r\n\r\n", "malformed HTTP version"},
	{"bare LF after the version", "GET / HTTP/1.1\nHost: h\r\n\r\n", "line not ended by CRLF"},
}

// A requestLineListener is a listener the lines are sent to, and how to reach it.
type requestLineListener struct {
	name     string
	dialConn func(t *testing.T) (net.Conn, *bufio.Reader)
}

func requestLineListeners(t *testing.T) []requestLineListener {
	_, plainAddr := startServer(t, helloHandler, serve.Options{})
	pki := newPKI(t)
	_, tlsAddr := startTLS(t, pki, helloHandler, serve.Options{})
	plain := func(addr string) func(t *testing.T) (net.Conn, *bufio.Reader) {
		return func(t *testing.T) (net.Conn, *bufio.Reader) {
			c := dial(t, addr)
			return c.TCPConn, c.R
		}
	}
	return []requestLineListener{
		{"plaintext", plain(plainAddr)},
		{"TLS", func(t *testing.T) (net.Conn, *bufio.Reader) {
			c, r := tlsDial(t, tlsAddr, pki.clientConfig(0))
			return c, r
		}},
	}
}

// TestMalformedRequestLineGets400: a malformed HTTP/1.x request line is answered with a 400 and
// its reason, then the close, on every listener, and so is a line that names no HTTP/1.x
// version where no Multiplexer may take it for its own (http2's TestH2InvalidPreface has the
// h2c port, which closes on such a line unanswered).
func TestMalformedRequestLineGets400(t *testing.T) {
	for _, ln := range requestLineListeners(t) {
		t.Run(ln.name, func(t *testing.T) {
			for _, tt := range malformedRequestLines {
				t.Run(tt.name, func(t *testing.T) {
					c, r := ln.dialConn(t)
					testclient.Expect400(t, c, r, tt.raw, tt.reason)
				})
			}
			for _, tt := range testclient.NotHTTP1Lines {
				t.Run(tt.Name, func(t *testing.T) {
					c, r := ln.dialConn(t)
					testclient.Expect400(t, c, r, tt.Raw, wire.ErrNotHTTP.Reason)
				})
			}
		})
	}
}
