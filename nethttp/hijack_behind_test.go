package nethttp

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/core/coretest"
)

// TestHijackGetsBytesBehindRequest: a handler that hijacks a request without an Upgrade header
// (a tunnel, a protocol of its own) reads every byte the client sent right behind the request,
// in order, whatever those bytes look like and however many came in the request's own segment
// — as it does on net/http's server, which the same handler is run on for comparison.
func TestHijackGetsBytesBehindRequest(t *testing.T) {
	h := func(w http.ResponseWriter, r *http.Request) {
		var n int
		fmt.Sscanf(r.URL.Query().Get("n"), "%d", &n)
		conn, brw, err := w.(http.Hijacker).Hijack()
		if err != nil {
			t.Errorf("Hijack: %v", err)
			return
		}
		defer conn.Close()
		got := make([]byte, n)
		if _, err := io.ReadFull(brw, got); err != nil {
			t.Errorf("reading the %d bytes behind the request: %v", n, err)
			return
		}
		conn.Write(got) // back as they came, for the client to compare
	}
	std := httptest.NewServer(http.HandlerFunc(h))
	t.Cleanup(std.Close)
	_, addr := serveStd(t, h, core.Options{})
	for _, n := range []int{100, 4096, 30000} {
		for _, server := range []struct{ name, addr string }{{"net/http", std.Listener.Addr().String()}, {"dwell", addr}} {
			t.Run(fmt.Sprintf("%s/%d", server.name, n), func(t *testing.T) {
				behind := make([]byte, n)
				for i := range behind {
					behind[i] = byte(i*7 + i/251) // neither a request nor a repeating pattern
				}
				cl := coretest.Dial(t, server.addr)
				cl.Send(fmt.Sprintf("GET /tunnel?n=%d HTTP/1.1\r\nHost: h\r\n\r\n%s", n, behind))
				got, err := io.ReadAll(cl.R)
				var ne *net.OpError
				if err != nil && !errors.As(err, &ne) { // a reset after the bytes is the close's
					t.Fatal(err)
				}
				if !bytes.Equal(got, behind) {
					t.Fatalf("the handler read %d bytes back, %s; want the %d sent behind the request, in order",
						len(got), firstDiff(got, behind), n)
				}
			})
		}
	}
}

// firstDiff says where got first differs from want.
func firstDiff(got, want []byte) string {
	for i := range min(len(got), len(want)) {
		if got[i] != want[i] {
			return fmt.Sprintf("differing from byte %d", i)
		}
	}
	return "a prefix"
}
