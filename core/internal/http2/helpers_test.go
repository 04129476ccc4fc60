package http2

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/dwellhttp/dwell/core/internal/http1"
	"github.com/dwellhttp/dwell/core/internal/serve"
	"github.com/dwellhttp/dwell/internal/testclient"
)

// startServer serves h, with HTTP/2 as core serves it, on a free loopback port for the
// duration of the test.
func startServer(t testing.TB, h serve.Handler, o serve.Options) (*serve.Server, string) {
	t.Helper()
	o.Addr = "127.0.0.1:0"
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	s := serve.NewServer(h, o)
	s.SetFirst(http1.New()) // HTTP/1.1 sees the h2c preface, and serves the rest
	s.SetMultiplexer(New())
	if err := s.Listen(); err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() { errc <- s.ListenAndServe() }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		s.Shutdown(ctx)
		if err := <-errc; err != serve.ErrServerClosed {
			t.Errorf("ListenAndServe returned %v", err)
		}
	})
	return s, s.Addr().String()
}

// The client side of these tests is internal/testclient's.
type rawConn = testclient.Conn

func dial(t testing.TB, addr string) *rawConn {
	t.Helper()
	return testclient.Dial(t, addr)
}

func receive[T any](t testing.TB, what string, ch <-chan T) T {
	t.Helper()
	return testclient.Receive(t, what, ch)
}

func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	testclient.WaitFor(t, what, cond)
}

func helloHandler(c *serve.Ctx) {
	c.SetHeader("Content-Type", "text/plain")
	c.WriteString("Hello World")
}

// openConns counts the connections the server's loops hold.
func openConns(s *serve.Server) int { return s.Stats().Total.Conns.Open }
