package body_test

import (
	"bytes"
	"io"
	"net/http/httputil"
	"testing"

	"github.com/dwellhttp/dwell/body"
	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/core/coretest"
)

// FuzzReaderChunked sends arbitrary bytes as a chunked request body to a real server, in pieces
// of a fuzzed size, and reads it with body.Reader. Core's FuzzChunked covers the decoder alone;
// this covers what sits between the socket and the decoder: bodies split anywhere by the
// network, leftovers after the body, a client that stops early. The server must always answer,
// with 200 and the body net/http's chunked reader would decode, or 400.
func FuzzReaderChunked(f *testing.F) {
	f.Add([]byte("5\r\nhello\r\n0\r\n\r\n"), uint8(1))
	f.Add([]byte("3;ext=1\r\nabc\r\n0\r\nX-T: v\r\n\r\n"), uint8(2))
	f.Add([]byte("a\r\n0123456789\r\n1\r\n\n\r\n0\r\n\r\nGET / HTTP/1.1\r\n\r\n"), uint8(3))
	f.Add([]byte("ffffffffffffffffff\r\n"), uint8(4))
	f.Add([]byte("2\r\nab"), uint8(5))
	f.Add([]byte("0\r\nBad Trailer\r\n\r\n"), uint8(6))
	_, addr := coretest.Serve(f, func(c *core.Ctx) {
		b, err := io.ReadAll(body.Reader(c))
		if err != nil {
			c.SetStatus(400)
			c.WriteString("error")
			return
		}
		c.Write(b)
	}, core.Options{})
	f.Fuzz(func(t *testing.T, in []byte, step uint8) {
		c := dial(t, addr) // its deadline makes a hang a failure, which the fuzzer keeps
		c.Send("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n")
		n := int(step%16) + 1
		for rest := in; len(rest) > 0; {
			k := min(n, len(rest))
			if _, err := c.Write(rest[:k]); err != nil {
				break // the server may close early, after a framing error
			}
			rest = rest[k:]
		}
		c.CloseWrite()
		resp, got := c.Response("POST")
		theirs, theirErr := io.ReadAll(httputil.NewChunkedReader(bytes.NewReader(in)))
		switch resp.StatusCode {
		case 200:
			if theirErr != nil || !bytes.Equal([]byte(got), theirs) {
				t.Fatalf("accepted %q as %q; net/http: %q %v", in, got, theirs, theirErr)
			}
		case 400:
			// Stricter than net/http is allowed: trailers are validated, whitespace before a
			// chunk extension is accepted, a missing final CRLF is an error.
		default:
			t.Fatalf("status %d for %q", resp.StatusCode, in)
		}
	})
}
