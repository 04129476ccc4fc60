package http1

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/netip"
	"testing"

	"github.com/dwellhttp/dwell/core/internal/serve"
)

// ServeConn: connections accepted elsewhere, served on the loops.

// fromAddr is a connection whose RemoteAddr is remote: what ServeConn gives its requests.
type fromAddr struct {
	*net.TCPConn
	remote net.Addr
}

func (c fromAddr) RemoteAddr() net.Addr { return c.remote }

// acceptedPair returns both ends of a TCP connection on the loopback interface: the client's,
// and the one a listener of the test's own accepted.
func acceptedPair(t *testing.T) (client net.Conn, accepted *net.TCPConn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	client, err = net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	a, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	return client, a.(*net.TCPConn)
}

// serveNoListener runs s with Serve(nil), and shuts it down when the test ends.
func serveNoListener(t *testing.T, s *serve.Server) {
	errc := make(chan error, 1)
	go func() { errc <- s.Serve(nil) }()
	t.Cleanup(func() {
		s.Shutdown(context.Background())
		if err := <-errc; err != serve.ErrServerClosed {
			t.Errorf("Serve(nil) returned %v", err)
		}
	})
}

// TestServeConn: a connection handed to a server that listens nowhere is served as an
// accepted one, its requests seeing the address its RemoteAddr gave; Waiting follows its
// handler.
func TestServeConn(t *testing.T) {
	wakers := make(chan serve.Waker, 1)
	s := newServer(func(c *serve.Ctx) {
		if c.Path() == "/park" {
			wakers <- c.Waker()
			c.Suspend(0)
		}
		c.WriteString(c.RemoteAddr().String())
	}, serve.Options{})
	serveNoListener(t, s)
	remote := netip.MustParseAddrPort("[2001:db8::7]:8080")
	client, accepted := acceptedPair(t)
	sc, err := s.ServeConn(fromAddr{accepted, net.TCPAddrFromAddrPort(remote)})
	if err != nil {
		t.Fatal(err)
	}
	if parked, _, over := sc.Waiting(); parked || over {
		t.Fatalf("before the request: parked %v, over %v", parked, over)
	}
	if _, err := io.WriteString(client, "GET /park HTTP/1.1\r\nHost: h\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	w := receive(t, "the Waker", wakers)
	waitFor(t, "the handler to park", func() bool {
		parked, _, _ := sc.Waiting()
		return parked
	})
	w.Wake(nil)
	resp, err := http.ReadResponse(bufio.NewReader(client), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	if string(b) != remote.String() {
		t.Fatalf("the handler saw %q, want %s", b, remote)
	}
	waitFor(t, "the exchange to be over", func() bool {
		_, _, over := sc.Waiting()
		return over
	})
}

// TestServeConnBesideListener: a server serving its own listener takes handed connections too,
// and without a RemoteAddr override its requests see the socket's peer.
func TestServeConnBesideListener(t *testing.T) {
	s, _ := startServer(t, func(c *serve.Ctx) { c.WriteString(c.RemoteAddr().String()) }, serve.Options{})
	client, accepted := acceptedPair(t)
	if _, err := s.ServeConn(accepted); err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(client, "GET / HTTP/1.1\r\nHost: h\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(client), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	if want := client.LocalAddr().String(); string(b) != want {
		t.Fatalf("the handler saw %q, want the client's address %s", b, want)
	}
}

// TestServeConnRefused: a server that has shut down, or never started, takes no connection and
// closes the one handed to it; so does any server a connection without a descriptor.
func TestServeConnRefused(t *testing.T) {
	expectClosed := func(t *testing.T, client net.Conn) {
		t.Helper()
		var b [1]byte
		if n, err := client.Read(b[:]); n != 0 || err != io.EOF {
			t.Fatalf("the client read %d, %v: the connection is open", n, err)
		}
	}
	t.Run("shut down", func(t *testing.T) {
		s := newServer(func(c *serve.Ctx) {}, serve.Options{})
		serveNoListener(t, s)
		_, accepted := acceptedPair(t)
		if _, err := s.ServeConn(accepted); err != nil { // started
			t.Fatal(err)
		}
		if err := s.Shutdown(context.Background()); err != nil {
			t.Fatal(err)
		}
		client, accepted := acceptedPair(t)
		if _, err := s.ServeConn(accepted); err != serve.ErrServerClosed {
			t.Fatalf("ServeConn returned %v", err)
		}
		expectClosed(t, client)
	})
	t.Run("never started", func(t *testing.T) {
		s := newServer(func(c *serve.Ctx) {}, serve.Options{})
		s.Shutdown(context.Background())
		if err := s.Serve(nil); err != serve.ErrServerClosed {
			t.Fatalf("Serve(nil) returned %v", err)
		}
		client, accepted := acceptedPair(t)
		if _, err := s.ServeConn(accepted); err != serve.ErrServerClosed {
			t.Fatalf("ServeConn returned %v", err)
		}
		expectClosed(t, client)
	})
	t.Run("no descriptor", func(t *testing.T) {
		s := newServer(func(c *serve.Ctx) {}, serve.Options{})
		serveNoListener(t, s)
		client, server := net.Pipe()
		defer client.Close()
		if _, err := s.ServeConn(server); err == nil || errors.Is(err, serve.ErrServerClosed) {
			t.Fatalf("ServeConn of a net.Pipe returned %v, want an error about its descriptor", err)
		}
		expectClosed(t, client)
	})
}
