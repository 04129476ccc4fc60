package engine

import (
	"io"
	"log/slog"
	"net"
	"testing"

	"github.com/dwellhttp/dwell/core/internal/netpoll"
)

// A testHost takes up to limit connections.
type testHost struct {
	limit int
	fds   []int
	lns   []int
}

func (h *testHost) Full() bool { return len(h.fds) >= h.limit }
func (h *testHost) Open(fd, ln int) {
	h.fds = append(h.fds, fd)
	h.lns = append(h.lns, ln)
}

// TestAcceptor: connections are handed to the host with their listener's index; a full host
// pauses accepting (the listener out of the poll set) and the rest wait in the backlog until
// Listen puts it back; Close closes a socket of the loop's own and hands a shared one to leave,
// unless ForgetShared forgot it.
func TestAcceptor(t *testing.T) {
	lfd, addr, p := listenAndPoll(t)
	a := NewAcceptor([]Listener{{FD: -1}, {FD: lfd}}, p, slog.New(slog.NewTextHandler(io.Discard, nil)), 0)
	if err := a.Listen(); err != nil {
		t.Fatal(err)
	}
	if a.At(lfd) != 1 || a.At(lfd+100) != -1 || a.Paused() {
		t.Fatalf("At(listener) %d, At(other) %d, paused %v", a.At(lfd), a.At(lfd+100), a.Paused())
	}
	for range 3 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
	}
	h := &testHost{limit: 2}
	acceptUntil(t, &a, p, h, func() bool { return a.Paused() })
	if len(h.fds) != 2 || h.lns[0] != 1 || h.lns[1] != 1 {
		t.Fatalf("a host of 2 got %d connections, from listeners %v", len(h.fds), h.lns)
	}
	h.limit = 4
	if err := a.Listen(); err != nil {
		t.Fatal(err)
	}
	acceptUntil(t, &a, p, h, func() bool { return len(h.fds) == 3 })
	if a.Paused() {
		t.Error("still paused with room")
	}
	for _, fd := range h.fds {
		netpoll.Close(fd)
	}

	var left []int
	a.Lns = append(a.Lns, Listener{FD: 1 << 20, Shared: true}) // never closed: Close leaves it
	a.Close(func(ln int) { left = append(left, ln) })
	if len(left) != 1 || left[0] != 2 || a.Lns[1].FD != -1 || a.Lns[2].FD != -1 {
		t.Fatalf("Close left %v; listeners %+v", left, a.Lns)
	}

	// A loop that never ran forgets its shared sockets, which its server closes.
	b := NewAcceptor([]Listener{{FD: 1 << 20, Shared: true}}, p, slog.New(slog.NewTextHandler(io.Discard, nil)), 0)
	b.ForgetShared()
	b.Close(func(ln int) { t.Errorf("Close left forgotten listener %d", ln) })
}

// TestAcceptorDrain: Drain takes the connections queued on the listening sockets, as many as
// the host has room for, and with none queued returns.
func TestAcceptorDrain(t *testing.T) {
	lfd, addr, p := listenAndPoll(t)
	a := NewAcceptor([]Listener{{FD: -1}, {FD: lfd}}, p, slog.New(slog.NewTextHandler(io.Discard, nil)), 0)
	if err := a.Listen(); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
	}
	h := &testHost{}
	// On Linux a connection is queued once Dial returns, and the first Drain takes them all;
	// the portable poller's listener queues them from a goroutine of its own, so the test
	// waits for the poller between drains.
	drainUntil := func(n int) {
		for a.Drain(h); len(h.fds) < n; a.Drain(h) {
			if _, err := p.Wait(-1); err != nil {
				t.Fatal(err)
			}
		}
	}
	h.limit = 2
	drainUntil(2)
	if len(h.fds) != 2 {
		t.Fatalf("a host with room for 2 got %d connections", len(h.fds))
	}
	h.limit = 10
	if err := a.Listen(); err != nil { // a full host paused it, as Accept does
		t.Fatal(err)
	}
	drainUntil(3)
	a.Drain(h) // nothing queued: returns
	if len(h.fds) != 3 || h.lns[2] != 1 {
		t.Fatalf("drained %d connections (of 3 queued), from listeners %v", len(h.fds), h.lns)
	}
	for _, fd := range h.fds {
		netpoll.Close(fd)
	}
	a.Close(func(int) {})
}

// acceptUntil waits for the listeners and accepts until done holds.
func acceptUntil(t *testing.T, a *Acceptor, p *netpoll.Poller, h AcceptHost, done func() bool) {
	t.Helper()
	for !done() {
		evs, err := p.Wait(-1)
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range evs {
			if i := a.At(ev.FD()); i >= 0 {
				if a.Accept(i, h) {
					t.Fatal("backing off")
				}
			}
		}
	}
}

// listenAndPoll opens a listening socket on the loopback interface, and a poller closed when
// the test ends.
func listenAndPoll(t *testing.T) (fd int, addr string, p *netpoll.Poller) {
	t.Helper()
	fd, err := netpoll.Listen(&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)}, false)
	if err != nil {
		t.Fatal(err)
	}
	p, err = netpoll.NewPoller(16)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return fd, listenAddr(t, fd), p
}

// listenAddr returns the address of the listening socket fd.
func listenAddr(t *testing.T, fd int) string {
	t.Helper()
	a, err := netpoll.BoundAddr(fd)
	if err != nil {
		t.Fatal(err)
	}
	return a.String()
}
