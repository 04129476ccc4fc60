package main

import (
	"io"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/dwellhttp/dwell/core/coretest"
)

// TestMain runs the command itself when asked to by the command tests.
func TestMain(m *testing.M) {
	if os.Getenv("HTTPBIN_RUN_MAIN") == "1" {
		os.Args = []string{"httpbin", "-addr", "127.0.0.1:0", "-loops", "2"}
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestGracefulShutdown: on SIGTERM the server stops accepting, requests already running (a
// delay in continuation style, a body still arriving) finish with their answers, and the
// process exits cleanly.
func TestGracefulShutdown(t *testing.T) {
	cmd := coretest.StartCommand(t, "HTTPBIN_RUN_MAIN", "1")
	addr := cmd.Addr
	delayed, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer delayed.Close()
	io.WriteString(delayed, "GET /delay/600 HTTP/1.1\r\nHost: h\r\n\r\n")
	upload, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer upload.Close()
	io.WriteString(upload, "POST /anything HTTP/1.1\r\nHost: h\r\nContent-Length: 10\r\n\r\nhello")
	time.Sleep(100 * time.Millisecond) // both requests are in their handlers
	cmd.Terminate()
	time.Sleep(100 * time.Millisecond)
	if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		c.Close()
		t.Error("new connections still accepted after SIGTERM")
	}
	io.WriteString(upload, "world")
	for name, c := range map[string]net.Conn{"delay": delayed, "upload": upload} {
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		b, _ := io.ReadAll(c)
		resp := string(b)
		if !strings.HasPrefix(resp, "HTTP/1.1 200 ") || !strings.Contains(resp, "Connection: close") {
			t.Errorf("%s: %q", name, resp)
		}
		if name == "upload" && !strings.Contains(resp, `"body_length":10`) {
			t.Errorf("upload truncated: %q", resp)
		}
	}
	if err := cmd.Wait(10 * time.Second); err != nil {
		t.Fatalf("after SIGTERM: %v", err)
	}
}
