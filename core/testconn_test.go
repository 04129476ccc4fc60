//go:build linux && !dwell_portable

package core

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"testing"

	"github.com/dwellhttp/dwell/internal/ctxhook"
	"golang.org/x/sys/unix"
)

// The in-process connections of testconn.go, through their hooks, as package coretest uses
// them (its tests cover them on the portable poller too).

// servePair serves s in-process and returns a connection handed to it from remote: the
// client's end, and the hook's handle.
func servePair(t *testing.T, s *Server, remote netip.AddrPort) (net.Conn, any) {
	t.Helper()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	f := os.NewFile(uintptr(fds[1]), "client")
	client, err := net.FileConn(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	h, err := ctxhook.ServeConn(s, fds[0], remote)
	if err != nil {
		t.Fatal(err)
	}
	return client, h
}

// serveInProcess starts s with ServeConns, and shuts it down when the test ends.
func serveInProcess(t *testing.T, s *Server) {
	errc := make(chan error, 1)
	go func() { errc <- ctxhook.ServeConns(s) }()
	t.Cleanup(func() {
		s.Shutdown(context.Background())
		if err := <-errc; err != ErrServerClosed {
			t.Errorf("ServeConns returned %v", err)
		}
	})
}

// TestServeConn: a connection handed to the loop is served as an accepted one, its requests
// seeing the address it was handed with; ConnParked follows its handler.
func TestServeConn(t *testing.T) {
	wakers := make(chan Waker, 1)
	s := NewServer(func(c *Ctx) {
		if c.Path() == "/park" {
			wakers <- c.Waker()
			c.Suspend(0)
		}
		c.WriteString(c.RemoteAddr().String())
	}, Options{})
	serveInProcess(t, s)
	remote := netip.MustParseAddrPort("[2001:db8::7]:8080")
	client, h := servePair(t, s, remote)
	if parked, _, over := ctxhook.ConnParked(h); parked || over {
		t.Fatalf("before the request: parked %v, over %v", parked, over)
	}
	if _, err := io.WriteString(client, "GET /park HTTP/1.1\r\nHost: h\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	w := receive(t, "the Waker", wakers)
	waitFor(t, "the handler to park", func() bool {
		parked, _, _ := ctxhook.ConnParked(h)
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
		_, _, over := ctxhook.ConnParked(h)
		return over
	})
}

// TestServeConnRefused: a server that serves a listener, or has shut down, takes no
// connection, and closes the socket handed to it.
func TestServeConnRefused(t *testing.T) {
	expectClosed := func(t *testing.T, fd int) {
		t.Helper()
		// fd is closed, and another socket may have its number: ask its peer instead.
		var b [1]byte
		f := os.NewFile(uintptr(fd), "peer")
		defer f.Close()
		if n, err := f.Read(b[:]); n != 0 || err != io.EOF {
			t.Fatalf("the peer read %d, %v: the socket is open", n, err)
		}
	}
	pair := func(t *testing.T) (server, peer int) {
		fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		return fds[0], fds[1]
	}
	remote := netip.MustParseAddrPort("192.0.2.1:1234")

	t.Run("listener", func(t *testing.T) {
		s, _ := startServer(t, func(c *Ctx) {}, Options{})
		fd, peer := pair(t)
		if _, err := ctxhook.ServeConn(s, fd, remote); err != errNotInProcess {
			t.Fatalf("ServeConn returned %v", err)
		}
		expectClosed(t, peer)
	})
	t.Run("shut down", func(t *testing.T) {
		s := NewServer(func(c *Ctx) {}, Options{})
		serveInProcess(t, s)
		servePair(t, s, remote) // started
		if err := s.Shutdown(context.Background()); err != nil {
			t.Fatal(err)
		}
		fd, peer := pair(t)
		if _, err := ctxhook.ServeConn(s, fd, remote); err != ErrServerClosed {
			t.Fatalf("ServeConn returned %v", err)
		}
		expectClosed(t, peer)
	})
	t.Run("never started", func(t *testing.T) {
		s := NewServer(func(c *Ctx) {}, Options{})
		s.Shutdown(context.Background())
		if err := ctxhook.ServeConns(s); err != ErrServerClosed {
			t.Fatalf("ServeConns returned %v", err)
		}
		fd, peer := pair(t)
		if _, err := ctxhook.ServeConn(s, fd, remote); err != ErrServerClosed {
			t.Fatalf("ServeConn returned %v", err)
		}
		expectClosed(t, peer)
	})
}
