//go:build linux

package http1

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/dwellhttp/dwell/core/internal/serve"
)

// TestSendFileNeverSendsAReusedDescriptor: when a forced shutdown ends SendFile's wait, the
// handler closes its file; a file opened next gets the same descriptor number. Whatever of the
// first file was still queued must not go out as the second's bytes.
func TestSendFileNeverSendsAReusedDescriptor(t *testing.T) {
	dir := t.TempDir()
	first := filepath.Join(dir, "first")
	second := filepath.Join(dir, "second")
	if err := os.WriteFile(first, []byte(strings.Repeat("A", 8<<20)), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(second, []byte(strings.Repeat("S", 8<<20)), 0o600); err != nil {
		t.Fatal(err)
	}
	sending := make(chan struct{})
	reused := make(chan error, 1)
	s, addr := startServer(t, func(c *serve.Ctx) {
		f, err := os.Open(first)
		if err != nil {
			panic(err)
		}
		close(sending)
		err = c.SendFile(f, 0, 8<<20)
		fd := int(f.Fd())
		f.Close()
		// Another file under the same number, as the next open would most likely get it.
		g, gerr := os.Open(second)
		switch {
		case gerr != nil:
		case int(g.Fd()) == fd: // the open took the freed number itself
			t.Cleanup(func() { g.Close() })
		default:
			gerr = syscall.Dup3(int(g.Fd()), fd, syscall.O_CLOEXEC)
			t.Cleanup(func() { syscall.Close(fd); g.Close() })
		}
		if gerr == nil && err == nil {
			gerr = errors.New("SendFile finished before the shutdown")
		}
		reused <- gerr
	}, serve.Options{WriteHighWater: 64 << 10})
	c := dial(t, addr)
	c.SetReadBuffer(128 << 10) // a client that does not read yet: the file stays queued
	c.Send("GET / HTTP/1.1\r\nHost: h\r\n\r\n")
	<-sending
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	s.Shutdown(ctx) // the grace period is over at once: SendFile's wait ends
	if err := <-reused; err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(c.R)
	// The body alone: the head's Date says "Sat" or "Sun" two days a week.
	_, body, _ := strings.Cut(string(raw), "\r\n\r\n")
	if strings.Contains(body, "S") {
		t.Fatal("bytes of another file went out under the first one's descriptor")
	}
}
