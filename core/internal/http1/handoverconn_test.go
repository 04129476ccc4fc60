package http1

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"testing"
	"time"

	"github.com/dwellhttp/dwell/core/internal/engine"
	"github.com/dwellhttp/dwell/core/internal/serve"
)

// HandOverConn: a connection handed over to goroutines, as a net.Conn.

// serveConns starts a server whose handler hands every connection over to a goroutine running
// use, and returns its address.
func serveConns(t *testing.T, o serve.Options, use func(conn net.Conn)) string {
	t.Helper()
	_, addr := startServer(t, func(c *serve.Ctx) {
		conn, err := c.HandOverConn()
		if err != nil {
			t.Errorf("HandOverConn: %v", err)
			return
		}
		go use(conn)
	}, o)
	return addr
}

// heldBytes returns how many bytes the handed connection behind conn holds for its goroutines,
// and whether the loop has stopped reading the socket.
func heldBytes(conn net.Conn) (int, bool) { return engine.Held(conn) }

// TestHandOverConnEcho: the bytes behind the request's head come first, then what follows; a
// Close sends what was written before it; a Read and a Write after it fail with net.ErrClosed.
func TestHandOverConnEcho(t *testing.T) {
	after := make(chan []error, 1)
	addr := serveConns(t, serve.Options{}, func(conn net.Conn) {
		buf := make([]byte, 64)
		var got []byte
		for len(got) < len("firstsecond") {
			n, err := conn.Read(buf)
			if err != nil {
				t.Errorf("Read: %v", err)
				break
			}
			got = append(got, buf[:n]...)
		}
		conn.Write([]byte("echo " + string(got)))
		conn.Close()
		_, rerr := conn.Read(buf)
		_, werr := conn.Write([]byte("x"))
		after <- []error{rerr, werr, conn.Close()}
	})
	cl := dial(t, addr)
	cl.Send("GET / HTTP/1.1\r\nHost: h\r\n\r\nfirst")
	cl.Send("second")
	b, err := io.ReadAll(cl.R)
	if string(b) != "echo firstsecond" || err != nil {
		t.Fatalf("the client read %q, %v; want the echo, then the close", b, err)
	}
	for i, err := range receive(t, "the errors after Close", after) {
		if !errors.Is(err, net.ErrClosed) {
			t.Errorf("call %d after Close: %v, want net.ErrClosed", i, err)
		}
	}
}

// TestHandOverConnInputBounded: a client that sends far more than its goroutine reads is held
// back by TCP's flow control once the connection holds engine.InBound bytes: the loop stops reading it,
// and reads again as the goroutine catches up, so that every byte arrives in order.
func TestHandOverConnInputBounded(t *testing.T) {
	conns := make(chan net.Conn, 1)
	start := make(chan struct{})
	const total = 8 << 20
	sum := make(chan string, 1)
	addr := serveConns(t, serve.Options{}, func(conn net.Conn) {
		defer conn.Close()
		conns <- conn
		<-start
		b, err := io.ReadAll(io.LimitReader(conn, total))
		sum <- fmt.Sprint(len(b), err, b[len(b)-1])
	})
	cl := dial(t, addr)
	cl.Send("GET / HTTP/1.1\r\nHost: h\r\n\r\n")
	conn := receive(t, "the connection", conns)
	go func() {
		data := make([]byte, total)
		for i := range data {
			data[i] = byte(i % 251)
		}
		cl.Write(data) // blocks until the goroutine reads: the test ends the connection otherwise
	}()
	waitFor(t, "the loop to stop reading a full connection", func() bool {
		_, paused := heldBytes(conn)
		return paused
	})
	if n, _ := heldBytes(conn); n > engine.InBound {
		t.Errorf("%d bytes held for the goroutine, over %d", n, engine.InBound)
	}
	close(start)
	if got, want := receive(t, "the goroutine's read", sum), fmt.Sprint(total, nil, byte((total-1)%251)); got != want {
		t.Errorf("read %s, want %s", got, want)
	}
}

// TestHandOverConnDeadlines: a Read with a read deadline already passed returns a timeout at
// once, though bytes wait; one waiting when its deadline passes returns a timeout too; once the
// deadline is removed, Read reads again. A Write past its deadline fails the same way, and so
// does one waiting for a client that reads nothing.
func TestHandOverConnDeadlines(t *testing.T) {
	steps := make(chan string, 8)
	conns := make(chan net.Conn, 1)
	proceed := make(chan struct{})
	yes := map[bool]string{true: "yes", false: "no"}
	addr := serveConns(t, serve.Options{WriteHighWater: 64 << 10}, func(conn net.Conn) {
		defer conn.Close()
		buf := make([]byte, 16)
		isTimeout := func(err error) bool {
			var ne net.Error
			return errors.As(err, &ne) && ne.Timeout() && errors.Is(err, os.ErrDeadlineExceeded)
		}
		conns <- conn
		<-proceed // the client's first bytes are in
		conn.SetReadDeadline(time.Now().Add(-time.Second))
		_, err := conn.Read(buf)
		steps <- "past read deadline: " + yes[isTimeout(err)]
		conn.SetReadDeadline(time.Time{})
		n, _ := conn.Read(buf)
		first := string(buf[:n])
		conn.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
		_, err = conn.Read(buf) // nothing more comes
		steps <- "read waiting past its deadline: " + yes[isTimeout(err)] + " after " + first
		conn.SetReadDeadline(time.Time{})
		n, err = conn.Read(buf)
		steps <- "read without deadline: " + string(buf[:n]) + " " + yes[err == nil]

		conn.SetWriteDeadline(time.Now().Add(-time.Second))
		_, err = conn.Write([]byte("x"))
		steps <- "past write deadline: " + yes[isTimeout(err)]
		conn.SetWriteDeadline(time.Now().Add(50 * time.Millisecond))
		piece := make([]byte, 64<<10)
		for err = nil; err == nil; {
			_, err = conn.Write(piece) // the client reads nothing
		}
		steps <- "write waiting past its deadline: " + yes[isTimeout(err)]
	})
	cl := dial(t, addr)
	cl.SetReadBuffer(16 << 10)
	cl.Send("GET / HTTP/1.1\r\nHost: h\r\n\r\nfirst")
	conn := receive(t, "the connection", conns)
	waitFor(t, "the first bytes in", func() bool {
		n, _ := heldBytes(conn)
		return n == len("first")
	})
	close(proceed)
	for _, w := range []string{"past read deadline: yes", "read waiting past its deadline: yes after first"} {
		if got := receive(t, "the goroutine's step", steps); got != w {
			t.Errorf("%q, want %q", got, w)
		}
	}
	cl.Send("second")
	for _, w := range []string{"read without deadline: second yes", "past write deadline: yes", "write waiting past its deadline: yes"} {
		if got := receive(t, "the goroutine's step", steps); got != w {
			t.Errorf("%q, want %q", got, w)
		}
	}
}
