package interop

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dwellhttp/dwell/body"
	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/core/coretest"
)

// The HTTP/2 tests run dwell's server, in this process, against HTTP/2 clients we did not
// write: Go's own, golang.org/x/net/http2's Transport and net/http's (h2_goclient_test.go),
// curl (h2_curl_test.go), nghttp2's nghttp and h2load (h2_nghttp_test.go), and the h2spec
// conformance suite (h2_spec_test.go). Each runs over h2c with prior knowledge on a plaintext
// port and over TLS, where ALPN chooses "h2", against one handler, h2Handler: a known body, an
// echo of the request body and a large response streamed in flushed pieces, so that both
// directions' flow control is crossed by bodies many windows long. The tools skip when they
// are not installed: apt-get install curl nghttp2-client, and
// go install github.com/summerwind/h2spec/cmd/h2spec@latest.

const (
	// h2StreamSize is how much GET /stream sends unless asked for another length (?n=), in
	// pieces of h2StreamPiece each flushed: 16 times the default stream window.
	h2StreamSize  = 1 << 20
	h2StreamPiece = 16 << 10
	// h2SafetyNet bounds what the tests wait for (a request, a tool's run) only so that a hang
	// fails the test rather than stalls it: no test asserts how long anything takes.
	h2SafetyNet = 2 * time.Minute
)

// helloBody is GET /hello's answer, which names the protocol the handler saw: "HTTP/2.0" on
// an HTTP/2 stream, "HTTP/1.1" otherwise.
func helloBody(proto string) string { return "hello proto=" + proto + "\n" }

// streamBytes returns n bytes of GET /stream's body from offset off: byte i is i mod 251, a prime
// that no piece or frame size divides, so that a piece lost, doubled or moved shows.
func streamBytes(off, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte((off + i) % 251)
	}
	return b
}

// h2Handler serves the HTTP/2 tests, over HTTP/2 and HTTP/1.1 alike:
//
//	GET /hello      helloBody
//	POST /echo      the request body, written back as it is read (once more than the
//	                write high-water mark is written, while the rest of the request comes)
//	GET /stream?n=N N bytes (h2StreamSize without n) of streamBytes, in pieces of
//	                h2StreamPiece, each flushed
//	/info           tlsInfo's line: the protocol, and the TLS connection's version and ALPN
//	GET /ws         a WebSocket echo: over HTTP/2, opened by an extended CONNECT (RFC 8441)
func h2Handler(c *core.Ctx) {
	switch c.Path() {
	case "/hello":
		c.SetHeader("Content-Type", "text/plain")
		c.WriteString(helloBody(c.Proto()))
	case "/echo":
		if c.Method() != "POST" {
			c.SetStatus(405)
			return
		}
		c.SetHeader("Content-Type", "application/octet-stream")
		buf := make([]byte, 32<<10)
		r := body.Reader(c)
		for {
			n, err := r.Read(buf)
			if _, werr := c.Write(buf[:n]); werr != nil {
				return
			}
			if err != nil {
				// io.EOF: all of it echoed. Another error (the client gone, a body that
				// breaks its Content-Length) leaves an echo shorter than what was sent,
				// which the client's comparison reports.
				return
			}
		}
	case "/stream":
		n := h2StreamSize
		if q := c.Query("n"); q != "" {
			var err error
			if n, err = strconv.Atoi(q); err != nil || n < 0 {
				c.SetStatus(400)
				return
			}
		}
		c.SetHeader("Content-Type", "application/octet-stream")
		for off := 0; off < n; off += h2StreamPiece {
			if _, err := c.Write(streamBytes(off, min(h2StreamPiece, n-off))); err != nil {
				return
			}
			if err := c.Flush(); err != nil {
				return
			}
		}
	case "/info":
		tlsInfo(c)
	case "/ws":
		wsEchoH2(c)
	default:
		c.SetStatus(404)
	}
}

// An h2Server is h2Handler served twice on 127.0.0.1 until the test ends: on a plaintext port
// (h2c with prior knowledge, and HTTP/1.1) and on a TLS port (h2 or http/1.1 by ALPN), with a
// certificate for localhost and 127.0.0.1 from a CA of the test's.
type h2Server struct {
	plain, tls string // the ports' addresses, 127.0.0.1:port
	pki        *tlsPKI
	roots      *x509.CertPool // trusts pki's CA, for Go's clients
}

// serveH2 starts an h2Server, each port served by two loops (as serveTLS's), with HTTP/2 on:
// dwell's default.
func serveH2(t *testing.T) *h2Server {
	t.Helper()
	p := newTLSPKI(t)
	_, plain := coretest.Serve(t, h2Handler, core.Options{Loops: 2})
	_, secure := coretest.Serve(t, h2Handler, core.Options{Loops: 2,
		TLSConfig: &tls.Config{Certificates: []tls.Certificate{p.leaf(t, "localhost")}}})
	roots := x509.NewCertPool()
	roots.AddCert(p.ca)
	return &h2Server{plain: plain, tls: secure, pki: p, roots: roots}
}

// url returns the URL of path (with its query) on the TLS port, or on the plaintext one.
func (s *h2Server) url(secure bool, path string) string {
	if secure {
		return "https://" + s.tls + path
	}
	return "http://" + s.plain + path
}

// port returns the port of the TLS port's address, or of the plaintext one's.
func (s *h2Server) port(secure bool) string {
	addr := s.plain
	if secure {
		addr = s.tls
	}
	return addr[strings.LastIndexByte(addr, ':')+1:]
}

// forEachPort runs f as a subtest for the plaintext port ("h2c") and for the TLS port ("tls").
func forEachPort(t *testing.T, f func(t *testing.T, secure bool)) {
	t.Run("h2c", func(t *testing.T) { f(t, false) })
	t.Run("tls", func(t *testing.T) { f(t, true) })
}

// writeTemp writes b to a file of the test's and returns its path.
func writeTemp(t *testing.T, name string, b []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// randomBody returns n bytes that no window or frame size lines up with.
func randomBody(n int) []byte {
	b := make([]byte, n)
	var x uint32 = 2463534242
	for i := range b {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		b[i] = byte(x)
	}
	return b
}

// sameBytes reports a body that is not want: its length, and where it first differs.
func sameBytes(t *testing.T, what string, got, want []byte) {
	t.Helper()
	if bytes.Equal(got, want) {
		return
	}
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	t.Errorf("%s: %d bytes, want %d; they differ from byte %d", what, len(got), len(want), i)
}

// runToolOut runs a tool as runTool does, with env added to its environment, and returns its
// standard output and its standard error apart. A run of hundreds of cases or thousands of
// requests is slow on a loaded machine, not hung: it is killed only after h2SafetyNet.
func runToolOut(t *testing.T, env []string, path string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), h2SafetyNet)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.SysProcAttr = childAttr()
	cmd.Env = append(os.Environ(), env...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("%s %q still running after %v:\n%s\n%s", filepath.Base(path), args, h2SafetyNet, out.Bytes(), errOut.Bytes())
	}
	return out.String(), errOut.String(), err
}
