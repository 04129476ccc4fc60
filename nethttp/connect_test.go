package nethttp

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/core/coretest"
)

// lineEcho is a core.Protocol that echoes what it receives, for a tunnel that a dwell handler
// beside the bridged ones opens.
type lineEcho struct{}

func (lineEcho) Receive(c *core.Conn, in []byte) int {
	c.Write(append([]byte("echo "), in...))
	return len(in)
}
func (lineEcho) Drained(*core.Conn)       {}
func (lineEcho) Timeout(*core.Conn)       {}
func (lineEcho) Shutdown(c *core.Conn)    { c.Close() }
func (lineEcho) Closed(*core.Conn, error) {}

// TestExtendedConnectRefused: an extended CONNECT (RFC 8441) never reaches a net/http handler,
// which could not open its tunnel (Hijack is not supported on an HTTP/2 stream) and would see
// it as a GET with a body: the bridge answers 501 before the handler runs — nor, through a
// ReverseProxy, its backend. A dwell handler beside them that hands its stream over opens its
// tunnel (200) and serves it, and the bridged handlers serve their GETs on the same connection.
func TestExtendedConnectRefused(t *testing.T) {
	var backendHits atomic.Int32
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		backendHits.Add(1)
		io.WriteString(w, "backend "+r.Method)
	}))
	t.Cleanup(backend.Close)
	u, _ := url.Parse(backend.URL)
	proxy := Handler(httputil.NewSingleHostReverseProxy(u))
	var stdHits atomic.Int32
	std := Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		stdHits.Add(1)
		io.WriteString(w, "Hello World")
	}))
	_, addr := coretest.Serve(t, func(c *core.Ctx) {
		switch c.Path() {
		case "/std":
			std(c)
		case "/proxy":
			proxy(c)
		case "/tunnel":
			if _, err := c.HandOver(lineEcho{}); err != nil {
				t.Errorf("HandOver: %v", err)
			}
		}
	}, core.Options{})

	c := dialH2Raw(t, addr)
	c.connect(1, "/std")
	c.connect(3, "/proxy")
	for _, id := range []uint32{1, 3} {
		r := c.response(id)
		if r.status != http.StatusNotImplemented || !r.end || r.rst || !strings.HasPrefix(string(r.body), "501 Not Implemented") {
			t.Errorf("stream %d: status %d, body %q, end %v, reset %v", id, r.status, r.body, r.end, r.rst)
		}
	}
	if n, m := stdHits.Load(), backendHits.Load(); n != 0 || m != 0 {
		t.Errorf("for extended CONNECTs the handler ran %d times, the backend %d", n, m)
	}

	c.connect(5, "/tunnel")
	c.until("the tunnel's answer", func() bool { s := c.streams[5]; return s != nil && s.status != 0 })
	if r := c.streams[5]; r.status != http.StatusOK || r.end || r.rst {
		t.Fatalf("the tunnel: status %d, end %v, reset %v", r.status, r.end, r.rst)
	}
	c.frame(rawData, 0, 5, []byte("hi"))
	c.until("the echo", func() bool { return string(c.streams[5].body) == "echo hi" })

	c.request(7, true, ":method", "GET", ":scheme", "http", ":authority", "h", ":path", "/std")
	c.request(9, true, ":method", "GET", ":scheme", "http", ":authority", "h", ":path", "/proxy")
	for id, want := range map[uint32]string{7: "Hello World", 9: "backend GET"} {
		if r := c.response(id); r.status != http.StatusOK || string(r.body) != want {
			t.Errorf("GET on stream %d: status %d, body %q", id, r.status, r.body)
		}
	}
}
