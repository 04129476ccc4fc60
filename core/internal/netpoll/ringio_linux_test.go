//go:build linux && !dwell_portable

package netpoll

import (
	"bytes"
	"io"
	"net"
	"reflect"
	"runtime"
	"strconv"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// ownedPair returns a client and the descriptor of its server side, watched for input by an
// io_uring poller that owns it.
func ownedPair(t *testing.T) (*Poller, int, func(string)) {
	t.Helper()
	p, err := NewRingPoller(16)
	if err != nil {
		t.Skipf("io_uring cannot be used here: %v", err)
	}
	t.Cleanup(p.Close)
	if p.ring.bufs == nil {
		t.Skip("the kernel took no receive buffers: the poller owns no socket")
	}
	owning[p] = true
	t.Cleanup(func() { delete(owning, p) })
	client, fd := watched(t, p, 1, WatchRead|WatchHangup)
	owners[fd] = client
	return p, fd, func(s string) { send(t, client, s) }
}

// owners are the clients of ownedPair's descriptors.
var owners = map[int]io.ReadWriter{}

// TestRingReceiveSize: a receive takes no more than the socket's last read asked for, so that
// what the loop does not read yet stays in the kernel; what one read leaves is read by the next.
func TestRingReceiveSize(t *testing.T) {
	p, fd, send := ownedPair(t)
	b := make([]byte, 10)
	if n, e := p.Read(fd, b); n != 0 || e != EAGAIN {
		t.Fatalf("nothing sent, yet read %d bytes, %v", n, e)
	}
	send("0123456789abcdefghij")
	awaitEvent(t, p, fd)
	if e := &p.ring.fds[fd]; e.rres != 10 || e.flags&fdMore == 0 {
		t.Fatalf("after a 10-byte read, a receive took %d bytes, and noted more may wait: %v", e.rres, e.flags&fdMore != 0)
	}
	for _, want := range []string{"0123", "456789", "abcdefghij"} {
		n, e := p.Read(fd, b[:len(want)])
		if e == EAGAIN {
			awaitEvent(t, p, fd)
			n, e = p.Read(fd, b[:len(want)])
		}
		if e != 0 || string(b[:n]) != want {
			t.Fatalf("read %q, %v; want %q", b[:n], e, want)
		}
	}
}

// TestRingLargeRead: a read larger than the ring's buffers, after a receive that filled its
// length, takes the rest from the socket at once, in order, so that a large body costs a turn
// of the loop per read rather than per buffer; the end of input comes after the last byte.
func TestRingLargeRead(t *testing.T) {
	p, fd, _ := ownedPair(t)
	in := make([]byte, 100<<10)
	for i := range in {
		in[i] = byte(i % 251)
	}
	client := owners[fd].(*net.TCPConn)
	if _, err := client.Write(in); err != nil {
		t.Fatal(err)
	}
	client.CloseWrite()
	for { // until the server's side holds it all
		if n, err := unix.IoctlGetInt(fd, unix.SIOCINQ); err != nil || n == len(in) {
			break
		}
		runtime.Gosched()
	}
	awaitEvent(t, p, fd) // a receive of firstRecv bytes, all it could take
	b := make([]byte, 256<<10)
	if n, e := p.Read(fd, b); e != 0 || !bytes.Equal(b[:n], in) {
		t.Fatalf("one read took %d bytes (%v), want the %d sent, in order", n, e, len(in))
	}
	for {
		n, e := p.Read(fd, b)
		if e == EAGAIN {
			awaitEvent(t, p, fd)
			continue
		}
		if n != 0 || e != 0 {
			t.Fatalf("after the last byte, read %d bytes, %v; want the end of input", n, e)
		}
		break
	}
}

// TestRingSend: a send started with Send holds its socket busy until a Wait reports it done;
// Sent then returns what it sent, once, and the client reads the buffers in order.
func TestRingSend(t *testing.T) {
	p, fd, _ := ownedPair(t)
	if err := p.Mod(fd, 1, WatchRead|WatchWrite); err != nil {
		t.Fatal(err)
	}
	iov := NewIOVecs(4)
	bufs := [][]byte{[]byte("HTTP/1.1 200 OK\r\n"), bytes.Repeat([]byte("x"), 100000)}
	for _, b := range bufs {
		iov.Append(b)
	}
	if e := p.Send(fd, iov, false); e != 0 {
		t.Fatal(e)
	}
	if e := p.Send(fd, iov, false); e == 0 {
		t.Fatal("a second send was started while one was under way")
	}
	if n, e, busy := p.Sent(fd); n != 0 || e != 0 || !busy {
		t.Fatalf("before any wait: Sent = %d, %v, busy %v", n, e, busy)
	}
	got := make(chan []byte)
	go func() {
		b, _ := io.ReadAll(io.LimitReader(owners[fd], 100017))
		got <- b
	}()
	for {
		if ev := awaitEvent(t, p, fd); ev.Writable() {
			break
		}
	}
	if n, e, busy := p.Sent(fd); n != 100017 || e != 0 || busy {
		t.Fatalf("Sent = %d, %v, busy %v; want all 100017 bytes", n, e, busy)
	}
	if n, e, busy := p.Sent(fd); n != 0 || e != 0 || busy {
		t.Fatalf("Sent again = %d, %v, busy %v", n, e, busy)
	}
	if b := <-got; !bytes.Equal(b, append(append([]byte(nil), bufs[0]...), bufs[1]...)) {
		t.Fatalf("the client read %d bytes, not the ones sent", len(b))
	}
}

// TestRingCloseSending: a socket closed while its send waits for a client that reads nothing
// tells what the send holds (Sending); the close cancels it, and its completion, whenever it
// comes, is not reported for the socket's descriptor.
func TestRingCloseSending(t *testing.T) {
	p, fd := sendingPair(t)
	if n := p.Sending(fd); n != 16<<20 {
		t.Fatalf("Sending = %d, want the send's 16 MiB", n)
	}
	p.Closing(fd)
	Close(fd)
	if n := p.Sending(fd); n != 0 {
		t.Fatalf("closed, yet Sending = %d", n)
	}
	for p.ring.busy > 0 { // the receive under way, cancelled too, and the send
		for _, ev := range look(t, p) {
			t.Fatalf("closed, yet reported: %+v", ev)
		}
	}
}

// sendingPair returns ownedPair's poller and descriptor with a send of 16 MiB under way, more than
// the socket's buffers and the client, which reads nothing, hold; and its receive.
func sendingPair(t *testing.T) (*Poller, int) {
	p, fd, _ := ownedPair(t)
	iov := NewIOVecs(1)
	iov.Append(make([]byte, 16<<20))
	if e := p.Send(fd, iov, false); e != 0 {
		t.Fatal(e)
	}
	look(t, p) // the send and the receive go to the kernel
	return p, fd
}

// TestRingBuffersRunOut: more sockets receive at once than the ring has buffers; the receives
// that find none are made again, without the loop sleeping on them, and every socket's bytes
// are read.
func TestRingBuffersRunOut(t *testing.T) {
	p, _, _ := ownedPair(t)
	const n = 2*smallBufs + 10
	clients := map[int]net.Conn{}
	for range n {
		client, fd := watched(t, p, 1, WatchRead)
		clients[fd] = client
	}
	look(t, p) // their receives are under way
	for fd, c := range clients {
		send(t, c, strconv.Itoa(fd))
	}
	b := make([]byte, 64)
	for len(clients) > 0 {
		evs, err := p.Wait(-1)
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range evs {
			fd := ev.FD()
			if clients[fd] == nil {
				continue // ownedPair's own
			}
			k, e := p.Read(fd, b)
			if e != 0 || string(b[:k]) != strconv.Itoa(fd) {
				t.Fatalf("socket %d read %q, %v", fd, b[:k], e)
			}
			delete(clients, fd)
		}
	}
}

// TestRingFDSize: the poller's entry per descriptor is the 24 bytes the docs count per
// connection (operations.md), and holds no pointer: the table lives in memory the collector
// never scans (ringfds_linux.go).
func TestRingFDSize(t *testing.T) {
	if n := unsafe.Sizeof(ringFD{}); n != 24 {
		t.Errorf("a ringFD is %d bytes, not 24", n)
	}
	rt := reflect.TypeFor[ringFD]()
	for i := range rt.NumField() {
		switch f := rt.Field(i); f.Type.Kind() {
		case reflect.Pointer, reflect.UnsafePointer, reflect.Slice, reflect.Map, reflect.String, reflect.Interface, reflect.Chan, reflect.Func:
			t.Errorf("ringFD.%s is a %s, which holds a pointer", f.Name, f.Type.Kind())
		}
	}
}

// TestRingCloseDrains: a ring closed while a receive waits for bytes and a send for room
// cancels both and waits for their ends, so that its buffers are freed with it rather than
// kept for the life of the process.
func TestRingCloseDrains(t *testing.T) {
	p, _ := sendingPair(t)
	if p.ring.busy != 2 {
		t.Fatalf("%d receives and sends under way, want 2", p.ring.busy)
	}
	leftBusy.Lock()
	before := len(leftBusy.rings)
	leftBusy.Unlock()
	rp := p.ring
	p.Close()
	leftBusy.Lock()
	after := len(leftBusy.rings)
	leftBusy.Unlock()
	if rp.busy != 0 || after != before || rp.bufs != nil {
		t.Fatalf("closed with %d requests under way, %d rings kept (was %d), buffers freed: %v",
			rp.busy, after, before, rp.bufs == nil)
	}
}
