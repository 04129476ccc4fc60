package http2

import (
	"testing"

	"github.com/dwellhttp/dwell/core/internal/http1"
	"github.com/dwellhttp/dwell/core/internal/serve"
	"github.com/dwellhttp/dwell/core/internal/servetest"
	"github.com/dwellhttp/dwell/internal/testclient"
)

// startServer serves h, with HTTP/2 as core serves it (HTTP/1.1 first, which sees the h2c
// preface and serves the rest), on a free loopback port for the duration of the test.
func startServer(t testing.TB, h serve.Handler, o serve.Options) (*serve.Server, string) {
	t.Helper()
	return servetest.Start(t, h, o, http1.New(), New())
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
