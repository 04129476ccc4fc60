//go:build linux && !dwell_portable

package http1

import (
	"fmt"
	"net"
	"strings"
	"syscall"
	"testing"

	"github.com/dwellhttp/dwell/core/internal/netpoll"
	"github.com/dwellhttp/dwell/core/internal/serve"
)

// By default the server's listeners hand a connection over only once it has sent something:
// a silent client is held by the kernel and costs the loop nothing, and a request is read (and
// a Connection: close exchange answered and closed) in the turn that accepts it. With
// DisableDeferAccept a connection is handed over as soon as it is established.
func TestDeferredAccept(t *testing.T) {
	hello := func(c *serve.Ctx) { c.WriteString("hello") }
	for _, tc := range []struct {
		name       string
		opts       serve.Options
		silentOpen int // connections the loops hold once the other exchange is over
	}{
		{"default", serve.Options{}, 0},
		{"DisableDeferAccept", serve.Options{DisableDeferAccept: true}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, addr := startServer(t, hello, tc.opts)
			s.Mu.Lock()
			defers := netpoll.DefersAccept(s.Listenings[0].FDs[0])
			s.Mu.Unlock()
			if want := !tc.opts.DisableDeferAccept; defers != want {
				t.Fatalf("listener defers accepting: %v, want %v", defers, want)
			}
			// The silent client's handshake completes before the other's, so a listener that
			// does not defer hands it over first.
			silent, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer silent.Close()
			c := dial(t, addr)
			c.Send("GET / HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n")
			if _, body := c.Response("GET"); body != "hello" {
				t.Fatalf("body %q, want hello", body)
			}
			c.ExpectEOF()
			if n := openConns(s); n != tc.silentOpen {
				t.Fatalf("connections held by the loops: %d, want %d (the silent one: %v)", n, tc.silentOpen, tc.silentOpen == 1)
			}
			// Once the silent client speaks, it is served either way.
			if _, err := silent.Write([]byte("GET / HTTP/1.1\r\nHost: h\r\n\r\n")); err != nil {
				t.Fatal(err)
			}
			buf := make([]byte, 512)
			n, err := silent.Read(buf)
			if err != nil || !strings.HasSuffix(string(buf[:n]), "hello") {
				t.Fatalf("the silent client's response: %q, %v", buf[:n], err)
			}
		})
	}
}

// A listener passed to Serve keeps its own setting, and the loops read it: one that defers is
// read from in the turn that accepts, one that does not is left alone.
func TestServeKeepsTheListenersDeferAccept(t *testing.T) {
	for _, defers := range []bool{false, true} {
		t.Run(fmt.Sprint("defers=", defers), func(t *testing.T) {
			lc := net.ListenConfig{Control: func(_, _ string, rc syscall.RawConn) error {
				if defers {
					rc.Control(func(fd uintptr) { netpoll.DeferAccept(int(fd), 5) })
				}
				return nil
			}}
			ln, err := lc.Listen(t.Context(), "tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			s := newServer(func(c *serve.Ctx) { c.WriteString("hello") }, serve.Options{Logger: newTestLogger(&logBuffer{})})
			errc := make(chan error, 1)
			go func() { errc <- s.Serve(ln) }()
			defer func() {
				s.Shutdown(t.Context())
				if err := <-errc; err != serve.ErrServerClosed {
					t.Error(err)
				}
			}()
			silent, err := net.Dial("tcp", ln.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer silent.Close()
			c := dial(t, ln.Addr().String())
			c.Send("GET / HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n")
			if _, body := c.Response("GET"); body != "hello" {
				t.Fatalf("body %q, want hello", body)
			}
			c.ExpectEOF()
			want := 1
			if defers {
				want = 0
			}
			if n := openConns(s); n != want {
				t.Fatalf("connections held by the loops: %d, want %d", n, want)
			}
		})
	}
}
