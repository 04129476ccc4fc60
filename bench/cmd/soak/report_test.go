package main

import (
	"errors"
	"io"
	"net"
	"os"
	"syscall"
	"testing"
)

// TestExpected: during a shutdown, a refused connection and an idle connection closed under a
// request are expected; an EOF or a reset is a failure, and before the shutdown so is everything.
func TestExpected(t *testing.T) {
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	idle := errors.New("Get \"http://x/\": http: server closed idle connection")
	shutdown := false
	tl := newTally(func() bool { return shutdown })
	tl.fail("before", refused)
	shutdown = true
	tl.fail("during", refused)
	tl.fail("during", idle)
	tl.fail("during", io.EOF)
	tl.fail("during", &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)})
	if tl.failures() != 3 || tl.expected["refused"] != 1 || tl.expected["idle connection closed under a request"] != 1 {
		t.Fatalf("%d failures %v, expected %v", tl.failures(), tl.failed, tl.expected)
	}
}

// TestTallyKeepsPortsOut: the same failure on two connections is counted as one kind.
func TestTallyKeepsPortsOut(t *testing.T) {
	tl := newTally(func() bool { return false })
	tl.fail("GET /", errors.New("read tcp 127.0.0.1:40001->127.0.0.1:8080: read: connection reset by peer"))
	tl.fail("GET /", errors.New("read tcp 127.0.0.1:40002->127.0.0.1:8080: read: connection reset by peer"))
	if len(tl.failed) != 1 || tl.failures() != 2 {
		t.Fatalf("%v", tl.failed)
	}
}
