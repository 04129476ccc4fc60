package http1

import (
	"testing"

	"github.com/dwellhttp/dwell/core/internal/serve"
)

const getHello = "GET /hello HTTP/1.1\r\nHost: x\r\n\r\n"

// TestMaxConnsHoldsNewcomers: at Options.MaxConns the loop accepts no more connections — a
// newcomer waits in the kernel's backlog, its request unread, while the connections open are
// served — until one closes.
func TestMaxConnsHoldsNewcomers(t *testing.T) {
	s, addr := startServer(t, helloHandler, serve.Options{Loops: 1, MaxConns: 1})
	k := dial(t, addr)
	k.Send(getHello)
	k.Response("GET")
	b := dial(t, addr)
	b.Send(getHello)
	k.Send(getHello) // the open connection is still served
	k.Response("GET")
	if n := openConns(s); n != 1 {
		t.Fatalf("%d connections open at MaxConns 1", n)
	}
	k.Close()
	if _, body := b.Response("GET"); body != "Hello World" {
		t.Fatalf("the newcomer, once a connection closed: %q", body)
	}
}

// TestMaxConnsCountsHeldHandlers: a connection whose client reset it while its handler waits
// for work that runs to its end (Seam.Hold, as under wait.Do or the net/http bridge) still
// counts against MaxConns until the handler returns, though its socket is closed: a client
// cannot pile up such work past the bound by resetting connections and opening others.
func TestMaxConnsCountsHeldHandlers(t *testing.T) {
	woken := make(chan serve.Waker, 1)
	h := func(c *serve.Ctx) {
		if c.Path() == "/hold" {
			woken <- c.Waker()
			c.Seam().Hold()
			return
		}
		helloHandler(c)
	}
	s, addr := startServer(t, h, serve.Options{Loops: 1, MaxConns: 2})
	k := dial(t, addr)
	k.Send(getHello)
	k.Response("GET")
	a := dial(t, addr)
	a.Send("GET /hold HTTP/1.1\r\nHost: x\r\n\r\n")
	held := receive(t, "the held handler's Waker", woken)
	t.Cleanup(func() { held.Wake(nil) }) // before the server's shutdown, should the test fail
	// A reset, which closes the socket at once (after a FIN, a client may still read).
	a.SetLinger(0)
	a.Close()
	waitFor(t, "the server to close the connection its client reset", func() bool { return openConns(s) == 1 })

	b := dial(t, addr)
	b.Send(getHello)
	k.Send(getHello) // a turn of the loop after the newcomer's request arrived
	k.Response("GET")
	if n := openConns(s); n != 1 {
		t.Fatalf("%d connections open: one open and one held handler are MaxConns 2", n)
	}
	held.Wake(nil)
	if _, body := b.Response("GET"); body != "Hello World" {
		t.Fatalf("the newcomer, once the held handler returned: %q", body)
	}
}
