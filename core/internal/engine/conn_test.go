package engine

import (
	"io"
	"net"
	"testing"
	"unsafe"

	"github.com/dwellhttp/dwell/core/internal/netpoll"
	"github.com/dwellhttp/dwell/internal/alias"
	"github.com/dwellhttp/dwell/internal/bufpool"
)

// TestSpills: handles are never 0, a released handle's slot serves the next buffer, and each
// handle stands for its own buffer until it is released.
func TestSpills(t *testing.T) {
	var s Spills
	var pool OutPool
	a, b := s.Hold(pool.Get(10)), s.Hold(pool.Get(20))
	if a == 0 || b == 0 || a == b {
		t.Fatalf("handles %d and %d", a, b)
	}
	s.Release(a, &pool)
	if c := s.Hold(pool.Get(30)); c != a {
		t.Errorf("a released slot is not reused: %d, freed %d", c, a)
	}
	if cap(s.bufs[b-1]) < 20 || s.bufs[b-1] == nil {
		t.Errorf("handle %d lost its buffer", b)
	}
	if d := s.Hold(pool.Get(40)); d == a || d == b {
		t.Errorf("a held slot is given again: %d", d)
	}
}

// TestConnKeepInput: input left in the loop's read buffer moves to a spill buffer of its own at
// the end of the turn, which keeps it while it is unparsed and goes back to the pool once it is
// all parsed; input already in the spill buffer stays where it is.
func TestConnKeepInput(t *testing.T) {
	l := &Loop{Buf: make([]byte, 64)}
	copy(l.Buf, "GET / HTTP/1.1\r\n")
	c := NewConn(5, false)
	c.In = l.Buf[4:9]
	c.KeepInput(l)
	if string(c.In) != "/ HTT" || c.spill() == 0 || alias.Within(c.In, l.Buf) {
		t.Fatalf("kept %q (spill %d, in the read buffer: %v)", c.In, c.spill(), alias.Within(c.In, l.Buf))
	}
	if c.Events() != netpoll.WatchRead|netpoll.WatchHangup {
		t.Fatalf("keeping input changed what c is watched for: %v", c.Events())
	}
	copy(l.Buf, "overwritten by the next connection's turn")
	if string(c.In) != "/ HTT" {
		t.Fatalf("the kept input changed with the read buffer: %q", c.In)
	}
	spill := c.spill()
	c.In = c.In[2:]
	c.KeepInput(l)
	if string(c.In) != "HTT" || c.spill() != spill {
		t.Fatalf("input in its spill buffer moved: %q, spill %d (was %d)", c.In, c.spill(), spill)
	}
	c.In = c.In[3:]
	c.KeepInput(l)
	if c.In != nil || c.spill() != 0 || len(l.Spills.free) != 1 {
		t.Fatalf("all parsed: input %q, spill %d, free spill slots %d", c.In, c.spill(), len(l.Spills.free))
	}
	c.DropSpill(l) // none: nothing to give back
	if len(l.Spills.free) != 1 {
		t.Fatalf("a second drop freed a slot again: %d free", len(l.Spills.free))
	}
}

// TestConnLayout: a Conn takes 32 bytes of the connection it begins, and its word holds what it
// packs: every interest the poller knows, and the largest spill handle beside the whole state.
func TestConnLayout(t *testing.T) {
	if n := unsafe.Sizeof(Conn{}); n != 32 {
		t.Errorf("Conn is %d bytes, not 32", n)
	}
	if all := connWord(netpoll.WatchRead | netpoll.WatchWrite | netpoll.WatchHangup); all&^wordEvents != 0 {
		t.Errorf("the interests %#x do not fit in the word's %#x", all, wordEvents)
	}
	c := NewConn(3, true)
	c.setSpill(maxSpills)
	if err := c.Watch(&Loop{}, 0, netpoll.WatchWrite); err != nil {
		t.Fatal(err)
	}
	if c.spill() != maxSpills || c.Events() != netpoll.WatchWrite || !c.Secure() {
		t.Errorf("spill %d, events %v, TLS %v: the word's parts overlap", c.spill(), c.Events(), c.Secure())
	}
	c.setSpill(0)
	if c.spill() != 0 || c.Events() != netpoll.WatchWrite || !c.Secure() {
		t.Errorf("after the spill: spill %d, events %v, TLS %v", c.spill(), c.Events(), c.Secure())
	}
}

// TestConnWatch: until it is registered a Conn only notes what it waits for, and the poller
// reports nothing of it; registered, it is reported for what it watches, and not once it watches
// for nothing, and again once it watches for input again; released, its descriptor is closed, so the client reads the end of the stream.
func TestConnWatch(t *testing.T) {
	p, err := netpoll.NewPoller(16)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	l := &Loop{Poll: p, Plain: NewPlain(&Counts{}, p)}
	client, fd := connPair(t)
	defer client.Close()
	if _, err := client.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	c := NewConn(fd, false)
	if c.Secure() || l.TransportOf(&c) != Transport(l.Plain) {
		t.Fatal("a plain connection's transport is not Plain")
	}
	const tag = 7
	// reported waits for the poller's report of c's input when wait is set (the portable poller
	// learns of it from a goroutine), and otherwise looks without waiting.
	reported := func(wait bool) bool {
		t.Helper()
		msec := 0
		if wait {
			msec = -1
		}
		for {
			evs, err := p.Wait(msec)
			if err != nil {
				t.Fatal(err)
			}
			for _, ev := range evs {
				if ev.Tag() == tag && ev.Readable() {
					return true
				}
			}
			if !wait {
				return false
			}
		}
	}

	if err := c.Watch(l, tag, netpoll.WatchRead); err != nil || c.Events() != netpoll.WatchRead {
		t.Fatalf("watch before registering: %v, events %v", err, c.Events())
	}
	if reported(false) {
		t.Fatal("an unregistered connection was reported")
	}
	if err := c.Register(l, tag); err != nil {
		t.Fatal(err)
	}
	if !reported(true) {
		t.Fatal("a registered connection with input was not reported")
	}
	buf := make([]byte, 4)
	if n, e := l.TransportOf(&c).Read(fd, nil, buf); n != 1 || e != 0 || buf[0] != 'x' {
		t.Fatalf("read %q, errno %v", buf[:n], e)
	}
	if err := c.Watch(l, tag, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := client.Write([]byte("y")); err != nil {
		t.Fatal(err)
	}
	if reported(false) {
		t.Fatal("a connection that watches for nothing was reported")
	}
	if err := c.Watch(l, tag, netpoll.WatchRead); err != nil {
		t.Fatal(err)
	}
	if !reported(true) {
		t.Fatal("a connection watched again for input was not reported")
	}
	if n, e := l.TransportOf(&c).Read(fd, nil, buf); n != 1 || e != 0 || buf[0] != 'y' {
		t.Fatalf("read %q, errno %v", buf[:n], e)
	}

	c.Release(l, false)
	if c.In != nil {
		t.Fatalf("a released connection keeps input %q", c.In)
	}
	if n, err := client.Read(make([]byte, 1)); n != 0 || err != io.EOF {
		t.Fatalf("the client read %d bytes, %v: the descriptor was not closed", n, err)
	}
}

// TestConnOwned: on an io_uring poller a registered connection is the poller's to read, TLS or
// not, and only a plain one's output goes through the poller's sends (Async): TLS writes its
// records itself. What the ring received is gone from the socket, so a TLS record read from
// the socket rather than through the poller would find nothing.
func TestConnOwned(t *testing.T) {
	p, err := netpoll.NewRingPoller(16)
	if err != nil {
		t.Skipf("io_uring cannot be used here: %v", err)
	}
	defer p.Close()
	l := &Loop{Poll: p, Plain: NewPlain(&Counts{}, p), TLS: NewTLS(TLSOptions{Counts: &Counts{}, Poll: p})}
	for _, secure := range []bool{false, true} {
		client, fd := connPair(t)
		defer client.Close()
		c := NewConn(fd, secure)
		if err := c.Register(l, 1); err != nil {
			t.Fatal(err)
		}
		if !c.Owned() {
			t.Fatalf("TLS %v: the ring poller does not own the connection", secure)
		}
		if a := c.Async(l); (a != nil) == secure {
			t.Errorf("TLS %v: Async %v", secure, a)
		}
		if _, err := client.Write([]byte("record")); err != nil {
			t.Fatal(err)
		}
		for reported := false; !reported; {
			evs, err := p.Wait(-1)
			if err != nil {
				t.Fatal(err)
			}
			for _, ev := range evs {
				reported = reported || ev.FD() == fd && ev.Readable()
			}
		}
		buf := make([]byte, 16)
		var n int
		var e netpoll.Errno
		if secure {
			n, e = l.TLS.read(fd, buf)
		} else {
			n, e = l.TransportOf(&c).Read(fd, nil, buf)
		}
		if n = max(n, 0); string(buf[:n]) != "record" || e != 0 {
			t.Errorf("TLS %v: read %q, errno %v", secure, buf[:n], e)
		}
		c.Release(l, false)
	}
}

// TestTLSBatchFitsPool: the records of a full batch of plaintext fit the largest buffer a loop's
// pool keeps, so that a large body's sends through the poller reuse the pool's buffers.
func TestTLSBatchFitsPool(t *testing.T) {
	var pool bufpool.Pool
	b := pool.Get(sealedSize(tlsBatch))
	if c := cap(b); c != 64<<10 || bufpool.SizeClass(c) != c {
		t.Fatalf("a batch's records (%d bytes) take a buffer of %d", sealedSize(tlsBatch), c)
	}
}

// connPair returns both ends of a TCP connection on the loopback: the client's, and a
// descriptor of the server's for a loop.
func connPair(t *testing.T) (net.Conn, int) {
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
	server, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	fd, err := netpoll.ConnFD(server)
	if err != nil {
		t.Fatal(err)
	}
	return client, fd
}
