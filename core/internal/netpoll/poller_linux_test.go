//go:build linux && !dwell_portable

package netpoll

import (
	"net"
	"testing"

	"golang.org/x/sys/unix"
)

// pollers are the ways a Poller watches: each test of its behaviour runs on each. The io_uring
// poller runs them twice, the second time owning the sockets it watches (Own: its receives read
// them, and the tests read what they brought with Poller.Read).
var pollers = []struct {
	name string
	new  func(size int) (*Poller, error)
	own  bool
}{
	{"epoll", NewPoller, false},
	{"io_uring", NewRingPoller, false},
	{"io_uring owning", NewRingPoller, true},
}

// owning is the pollers that own the sockets watched (see pollers).
var owning = map[*Poller]bool{}

func eachPoller(t *testing.T, test func(t *testing.T, p *Poller)) {
	for _, pl := range pollers {
		t.Run(pl.name, func(t *testing.T) {
			p, err := pl.new(16)
			if err != nil {
				t.Skipf("%s cannot be used here: %v", pl.name, err)
			}
			defer p.Close()
			if (p.ring != nil) != (pl.new == nil || pl.name != "epoll") {
				t.Fatalf("%s made a poller on io_uring: %v", pl.name, p.ring != nil)
			}
			if pl.own {
				if p.ring.bufs == nil {
					t.Skip("the kernel took no receive buffers: the poller owns no socket")
				}
				owning[p] = true
				defer delete(owning, p)
			}
			test(t, p)
		})
	}
}

// TestPollerLevel: a descriptor is reported while it has bytes, each wait, with its tag; not
// once it is drained; and again when more come.
func TestPollerLevel(t *testing.T) {
	eachPoller(t, func(t *testing.T, p *Poller) {
		client, fd := watched(t, p, 7, WatchRead|WatchHangup)
		if evs := look(t, p); len(evs) != 0 {
			t.Fatalf("nothing sent, yet reported: %v", evs)
		}
		send(t, client, "abc")
		for i := range 3 {
			ev := awaitEvent(t, p, fd)
			if ev.Tag() != 7 || !ev.Readable() || ev.Failed() || ev.PeerClosed() {
				t.Fatalf("wait %d: %+v", i, ev)
			}
		}
		drain(t, p, fd, "abc")
		if evs := look(t, p); len(evs) != 0 {
			t.Fatalf("drained, yet reported: %v", evs)
		}
		send(t, client, "d")
		if ev := awaitEvent(t, p, fd); !ev.Readable() {
			t.Fatalf("new bytes: %+v", ev)
		}
	})
}

// TestPollerMod: a descriptor is reported for what it is watched for now, under its tag now;
// not for input while it watches for none; and for room to write when it asks.
func TestPollerMod(t *testing.T) {
	eachPoller(t, func(t *testing.T, p *Poller) {
		client, fd := watched(t, p, 1, WatchRead)
		send(t, client, "x")
		awaitEvent(t, p, fd)
		if err := p.Mod(fd, 2, 0); err != nil {
			t.Fatal(err)
		}
		if evs := look(t, p); len(evs) != 0 {
			t.Fatalf("watching for nothing, yet reported: %v", evs)
		}
		if err := p.Mod(fd, 3, WatchWrite); err != nil {
			t.Fatal(err)
		}
		if ev := awaitEvent(t, p, fd); ev.Tag() != 3 || !ev.Writable() || ev.Readable() {
			t.Fatalf("watching for room to write: %+v", ev)
		}
		if err := p.Mod(fd, 4, WatchRead); err != nil {
			t.Fatal(err)
		}
		if ev := awaitEvent(t, p, fd); ev.Tag() != 4 || !ev.Readable() || ev.Writable() {
			t.Fatalf("watching for input again: %+v", ev)
		}
		if err := p.Mod(1<<20, 0, WatchRead); err == nil {
			t.Fatal("a descriptor never added was modified")
		}
	})
}

// TestPollerPeerShutdown: a peer's shutdown is reported to a descriptor that watches for it; one
// that does not is not reported again and again for it (the loop would spin), yet learns of the
// reset that follows.
func TestPollerPeerShutdown(t *testing.T) {
	eachPoller(t, func(t *testing.T, p *Poller) {
		client, fd := watched(t, p, 1, WatchRead|WatchHangup)
		if err := client.(*net.TCPConn).CloseWrite(); err != nil {
			t.Fatal(err)
		}
		if ev := awaitEvent(t, p, fd); !ev.PeerClosed() || !ev.Readable() {
			t.Fatalf("the peer's shutdown: %+v", ev)
		}
		if err := p.Mod(fd, 1, 0); err != nil {
			t.Fatal(err)
		}
		for i := range 3 {
			if evs := look(t, p); len(evs) != 0 {
				t.Fatalf("look %d: watching for nothing after the peer's shutdown, yet reported: %v", i, evs)
			}
		}
		if p.ring != nil && (p.ring.r.ready() != 0 || p.ring.fds[fd].state != fdMulti) {
			// io_uring's poll reports the shutdown whatever it is asked (see ringPoll): had the
			// request been armed again and again, completions would keep coming.
			t.Fatalf("%d completions wait, the descriptor's request is in state %d", p.ring.r.ready(), p.ring.fds[fd].state)
		}
		// Bytes the client never reads make its close a reset.
		if n, e := Write(fd, []byte("unread")); n != 6 || e != 0 {
			t.Fatalf("write: %d, %v", n, e)
		}
		client.(*net.TCPConn).SetLinger(0)
		client.Close()
		if ev := awaitEvent(t, p, fd); !ev.Failed() {
			t.Fatalf("the reset: %+v", ev)
		}
	})
}

// TestPollerDel: a descriptor taken out (Del) or closing (Closing) is not reported, and a close
// after Closing is the socket's end: the client reads it.
func TestPollerDel(t *testing.T) {
	eachPoller(t, func(t *testing.T, p *Poller) {
		client, fd := watched(t, p, 1, WatchRead)
		send(t, client, "x")
		awaitEvent(t, p, fd)
		p.Del(fd)
		if evs := look(t, p); len(evs) != 0 {
			t.Fatalf("taken out, yet reported: %v", evs)
		}
		if err := p.Add(fd, 2, WatchRead); err != nil {
			t.Fatal(err)
		}
		if owning[p] {
			// What the ring had received went with Del.
			p.Own(fd)
			send(t, client, "x")
		}
		if ev := awaitEvent(t, p, fd); ev.Tag() != 2 {
			t.Fatalf("added again: %+v", ev)
		}
		drain(t, p, fd, "x")
		p.Closing(fd)
		Close(fd)
		if evs := look(t, p); len(evs) != 0 {
			t.Fatalf("closed, yet reported: %v", evs)
		}
		if n, err := client.Read(make([]byte, 1)); n != 0 || err == nil {
			t.Fatalf("the client read %d bytes after the close, %v", n, err)
		}
	})
}

// TestPollerReuse: a descriptor closed and opened again (the same number, another socket) within
// a turn is reported under its new tag only.
func TestPollerReuse(t *testing.T) {
	eachPoller(t, func(t *testing.T, p *Poller) {
		client, fd := watched(t, p, 1, WatchRead|WatchWrite)
		awaitEvent(t, p, fd)
		p.Closing(fd)
		Close(fd)
		client.Close()
		client2, fd2 := socketPair(t)
		if fd2 != fd {
			t.Skipf("the descriptor was not reused (%d, then %d)", fd, fd2)
		}
		if err := p.Add(fd2, 2, WatchRead); err != nil {
			t.Fatal(err)
		}
		send(t, client2, "y")
		for {
			ev := awaitEvent(t, p, fd2)
			if ev.Tag() != 2 || ev.Writable() {
				t.Fatalf("the new socket's event: %+v", ev)
			}
			if ev.Readable() {
				break
			}
		}
	})
}

// TestPollerListener: a listening socket, shared between loops or not, is reported when a
// connection waits on it, and not once it is taken out.
func TestPollerListener(t *testing.T) {
	for _, shared := range []bool{false, true} {
		eachPoller(t, func(t *testing.T, p *Poller) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			fd, err := ListenerFD(ln)
			if err != nil {
				t.Fatal(err)
			}
			defer Close(fd)
			if err := p.AddListener(fd, shared); err != nil {
				t.Fatalf("shared %v: %v", shared, err)
			}
			c, err := net.Dial("tcp", ln.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if ev := awaitEvent(t, p, fd); !ev.Readable() || ev.Tag() != 0 {
				t.Fatalf("shared %v: %+v", shared, ev)
			}
			p.Del(fd)
			if evs := look(t, p); len(evs) != 0 {
				t.Fatalf("shared %v: taken out, yet reported: %v", shared, evs)
			}
		})
	}
}

// watched returns a client's connection and its server side's descriptor, which p watches for
// in under tag.
func watched(t *testing.T, p *Poller, tag uint32, in Interest) (net.Conn, int) {
	t.Helper()
	client, fd := socketPair(t)
	if err := p.Add(fd, tag, in); err != nil {
		t.Fatal(err)
	}
	if owning[p] && !p.Own(fd) {
		t.Fatal("the poller does not own the socket")
	}
	return client, fd
}

// socketPair returns a client's connection and a descriptor of its server side, non-blocking,
// closed when the test ends unless the test closes it first.
func socketPair(t *testing.T) (net.Conn, int) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	client, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	server, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	fd, err := ConnFD(server)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fd) }) // harmless when the test closed it: EBADF
	return client, fd
}

func send(t *testing.T, c net.Conn, s string) {
	t.Helper()
	if _, err := c.Write([]byte(s)); err != nil {
		t.Fatal(err)
	}
}

// drain reads want from fd, which has it, through p (Poller.Read).
func drain(t *testing.T, p *Poller, fd int, want string) {
	t.Helper()
	b := make([]byte, 64)
	n, e := p.Read(fd, b)
	if e != 0 || string(b[:n]) != want {
		t.Fatalf("read %q, %v; want %q", b[:n], e, want)
	}
}

// look returns what p reports without waiting.
func look(t *testing.T, p *Poller) []Event {
	t.Helper()
	evs, err := p.Wait(0)
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

// awaitEvent waits until p reports fd, and returns its event.
func awaitEvent(t *testing.T, p *Poller, fd int) Event {
	t.Helper()
	for {
		evs, err := p.Wait(-1)
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range evs {
			if ev.FD() == fd {
				return ev
			}
		}
	}
}
