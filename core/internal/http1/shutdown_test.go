package http1

import (
	"context"
	"net"
	"testing"

	"github.com/dwellhttp/dwell/core/internal/serve"
)

// TestShutdownRefusesBeforeItCloses: every loop has stopped accepting before any connection
// hears of the shutdown. A client whose idle connection the shutdown closes, and that connects
// again at once, is refused — not queued on a listening socket that another loop closes a
// moment later, which resets the connection once its request has gone out, a request the
// client cannot tell was served or not.
func TestShutdownRefusesBeforeItCloses(t *testing.T) {
	s, addr := startServer(t, helloHandler, serve.Options{Loops: 2})
	conns := make([]*rawConn, 16) // on both loops: SO_REUSEPORT spreads them
	for i := range conns {
		conns[i] = dial(t, addr)
		conns[i].Send("GET / HTTP/1.1\r\nHost: h\r\n\r\n")
		conns[i].Response("GET")
	}
	done := make(chan error, 1)
	go func() { done <- s.Shutdown(context.Background()) }()
	for i, c := range conns {
		c.ExpectEOF()
		if nc, err := net.Dial("tcp", addr); err == nil {
			nc.Close()
			t.Fatalf("connection %d was closed by the shutdown, and a new one was still taken", i)
		}
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// TestShutdownFinishesAHeadUnderWay: a request whose head was arriving when the shutdown began
// is a request under way, as one whose handler runs: it is served once its head is whole, and
// its connection closes after the response. (An idle connection closes at once.)
func TestShutdownFinishesAHeadUnderWay(t *testing.T) {
	s, addr := startServer(t, helloHandler, serve.Options{Loops: 1}) // one loop: the idle connection's close says the shutdown reached the other's
	idle := dial(t, addr)
	idle.Send("GET /x HTTP/1.1\r\nHost: h\r\n\r\n")
	idle.Response("GET")
	part := dial(t, addr)
	part.Send("GET /p HTTP/1.1\r\nHo")
	waitFor(t, "the partial head read", func() bool { return s.Stats().Total.Conns.Reading == 1 })
	done := make(chan error, 1)
	go func() { done <- s.Shutdown(context.Background()) }()
	idle.ExpectEOF()
	part.Send("st: h\r\n\r\n")
	resp, body := part.Response("GET")
	if body != "Hello World" || !resp.Close {
		t.Fatalf("%q, close %v: want the response, closing", body, resp.Close)
	}
	part.ExpectEOF()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
