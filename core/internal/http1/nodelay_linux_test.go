//go:build linux && !dwell_portable

package http1

import (
	"net"
	"strconv"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/dwellhttp/dwell/core/internal/serve"
)

// Accepted connections must have Nagle's algorithm off, both on the server's own listener and
// on one passed to Serve: a response that waits for an ACK would add up to 40 ms.
func TestAcceptedNoDelay(t *testing.T) {
	noDelay := func(c *serve.Ctx) {
		v, err := unix.GetsockoptInt(int(c.Exchange.(*conn).FD), unix.IPPROTO_TCP, unix.TCP_NODELAY)
		if err != nil {
			c.WriteString(err.Error())
			return
		}
		c.WriteString(strconv.Itoa(v))
	}
	check := func(t *testing.T, addr string) {
		c := dial(t, addr)
		c.Send("GET / HTTP/1.1\r\nHost: h\r\n\r\n")
		if _, body := c.Response("GET"); body != "1" {
			t.Fatalf("TCP_NODELAY on the accepted socket: %q, want 1", body)
		}
	}
	t.Run("ListenAndServe", func(t *testing.T) {
		_, addr := startServer(t, noDelay, serve.Options{})
		check(t, addr)
	})
	t.Run("Serve", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		s := newServer(noDelay, serve.Options{Logger: newTestLogger(&logBuffer{})})
		errc := make(chan error, 1)
		go func() { errc <- s.Serve(ln) }()
		check(t, ln.Addr().String())
		s.Shutdown(t.Context())
		if err := <-errc; err != serve.ErrServerClosed {
			t.Fatal(err)
		}
	})
}
