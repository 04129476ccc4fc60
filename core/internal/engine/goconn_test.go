package engine

import (
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"testing"
	"time"
)

// A testLoop runs what is posted to it, in order, on a goroutine of its own: the loop side of a
// GoConn under test.
type testLoop struct{ ch chan func() }

func newTestLoop(t *testing.T) *testLoop {
	l := &testLoop{ch: make(chan func(), 64)}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for f := range l.ch {
			f()
		}
	}()
	t.Cleanup(func() { close(l.ch); <-done })
	return l
}

func (l *testLoop) Post(f func()) error { l.ch <- f; return nil }

// do runs f on the loop and waits for it.
func (l *testLoop) do(f func()) {
	ran := make(chan struct{})
	l.Post(func() { f(); close(ran) })
	<-ran
}

// A testSide is a LoopConn that records what the GoConn asked of it.
type testSide struct {
	mu      sync.Mutex
	written []byte
	closed  bool
	resumed int
}

func (s *testSide) Write(p []byte) error {
	s.mu.Lock()
	s.written = append(s.written, p...)
	s.mu.Unlock()
	return nil
}
func (s *testSide) Close() { s.mu.Lock(); s.closed = true; s.mu.Unlock() }
func (s *testSide) ResumeReading() {
	s.mu.Lock()
	s.resumed++
	s.mu.Unlock()
}
func (s *testSide) state() (string, bool, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return string(s.written), s.closed, s.resumed
}

func startGoConn(t *testing.T) (*testLoop, *testSide, *GoConn, *RemoteState, net.Conn) {
	l, side := newTestLoop(t), &testSide{}
	g := NewGoConn(l, &net.TCPAddr{IP: net.IPv4zero}, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 9})
	r := new(RemoteState)
	r.Init(false, false)
	var conn net.Conn
	l.do(func() { conn = g.Start(side, r, 1<<10) })
	return l, side, g, r, conn
}

// TestGoConnBytes: what the loop takes is read in order; what is written reaches the loop side
// in order; Close closes it after the writes before it; then reads and writes fail with
// net.ErrClosed.
func TestGoConnBytes(t *testing.T) {
	l, side, g, _, conn := startGoConn(t)
	l.do(func() {
		if n, full := g.Take([]byte("hello ")); n != 6 || full {
			t.Errorf("Take: %d, full %v", n, full)
		}
		g.Take([]byte("world"))
	})
	got, err := io.ReadAll(io.LimitReader(conn, 11))
	if string(got) != "hello world" || err != nil {
		t.Fatalf("read %q, %v", got, err)
	}
	conn.Write([]byte("one "))
	conn.Write([]byte("two"))
	if err := conn.Close(); err != nil {
		t.Fatal(err)
	}
	l.do(func() {}) // after the posted flushes and close
	if w, closed, _ := side.state(); w != "one two" || !closed {
		t.Fatalf("the loop side got %q, closed %v", w, closed)
	}
	if _, err := conn.Read(make([]byte, 1)); !errors.Is(err, net.ErrClosed) {
		t.Errorf("Read after Close: %v", err)
	}
	if _, err := conn.Write([]byte("x")); !errors.Is(err, net.ErrClosed) {
		t.Errorf("Write after Close: %v", err)
	}
	if conn.LocalAddr().String() != "0.0.0.0:0" || conn.RemoteAddr().String() != "127.0.0.1:9" {
		t.Errorf("addresses %v %v", conn.LocalAddr(), conn.RemoteAddr())
	}
}

// TestGoConnBound: Take reports full once InBound bytes are held, and the loop side reads again
// once the goroutines have read half.
func TestGoConnBound(t *testing.T) {
	l, side, g, _, conn := startGoConn(t)
	chunk := make([]byte, InBound/4)
	l.do(func() {
		for i := range 4 {
			n, full := g.Take(chunk)
			if n != len(chunk) || full != (i == 3) {
				t.Errorf("Take %d: %d, full %v", i, n, full)
			}
		}
		if n, _ := g.Take(chunk); n != 0 {
			t.Errorf("Take past the bound took %d", n)
		}
	})
	if n, paused := Held(conn); n != InBound || !paused {
		t.Fatalf("held %d, paused %v", n, paused)
	}
	if _, err := io.ReadFull(conn, make([]byte, InBound/2)); err != nil {
		t.Fatal(err)
	}
	l.do(func() {})
	if _, _, resumed := side.state(); resumed != 1 {
		t.Fatalf("resumed %d times after half was read", resumed)
	}
	if n, paused := Held(conn); n != InBound/2 || paused {
		t.Fatalf("held %d, paused %v", n, paused)
	}
}

// TestGoConnEnds: input ended on the loop reads as io.EOF after what came; a close of the
// connection fails writes with its error, and wakes a writer waiting for the output to drain.
func TestGoConnEnds(t *testing.T) {
	l, _, g, r, conn := startGoConn(t)
	l.do(func() { g.Take([]byte("last")); g.EndInput() })
	if got, err := io.ReadAll(conn); string(got) != "last" || err != nil {
		t.Fatalf("read %q, %v", got, err)
	}
	r.SetOver()
	wrote := make(chan error, 1)
	go func() { _, err := conn.Write([]byte("waits")); wrote <- err }()
	gone := errors.New("the client left")
	l.do(func() { r.Closed(gone); g.Release() })
	if err := <-wrote; !errors.Is(err, gone) {
		t.Fatalf("the waiting Write: %v", err)
	}
	if r.WaitDrained() {
		t.Error("WaitDrained reports a closed connection open")
	}
}

// TestGoConnDeadline: a read deadline already passed fails a Read at once with a timeout; one
// that passes later wakes the Read waiting; the zero time removes it.
func TestGoConnDeadline(t *testing.T) {
	l, _, g, _, conn := startGoConn(t)
	conn.SetReadDeadline(time.Now().Add(-time.Second))
	_, err := conn.Read(make([]byte, 1))
	var ne net.Error
	if !errors.Is(err, os.ErrDeadlineExceeded) || !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("Read past its deadline: %v", err)
	}
	conn.SetReadDeadline(time.Now().Add(time.Millisecond))
	if _, err := conn.Read(make([]byte, 1)); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("Read waiting for its deadline: %v", err)
	}
	conn.SetReadDeadline(time.Time{})
	l.do(func() { g.Take([]byte("x")) })
	if n, err := conn.Read(make([]byte, 1)); n != 1 || err != nil {
		t.Fatalf("Read with no deadline: %d, %v", n, err)
	}
}
