package main

import (
	"net"
	"os"
	"strings"
	"testing"

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
	// Each running request comes behind a quick one, in the same write: the server reads the
	// two together and runs the second in the same turn of its loop in which it answers the
	// first. Once that answer is in, the second request is running, and the signal finds it
	// so.
	const quick = "GET /status/204 HTTP/1.1\r\nHost: h\r\n\r\n"
	delayed := coretest.Dial(t, addr)
	delayed.Send(quick + "GET /delay/600 HTTP/1.1\r\nHost: h\r\n\r\n")
	upload := coretest.Dial(t, addr)
	upload.Send(quick + "POST /anything HTTP/1.1\r\nHost: h\r\nContent-Length: 10\r\n\r\nhello")
	running := []struct {
		name, method string
		c            *coretest.Conn
	}{{"delay", "GET", delayed}, {"upload", "POST", upload}}
	for _, r := range running {
		if resp, _ := r.c.Response("GET"); resp.StatusCode != 204 {
			t.Fatalf("%s: the quick request before it: %d", r.name, resp.StatusCode)
		}
	}
	if err := cmd.Terminate(); err != nil {
		t.Fatal(err)
	}
	coretest.WaitFor(t, "new connections refused after SIGTERM", func() bool {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			return true
		}
		c.Close()
		return false
	})
	upload.Send("world")
	for _, r := range running {
		resp, body := r.c.Response(r.method)
		if resp.StatusCode != 200 || !resp.Close {
			t.Errorf("%s: %d, close %v: %q", r.name, resp.StatusCode, resp.Close, body)
		}
		if r.name == "upload" && !strings.Contains(body, `"body_length":10`) {
			t.Errorf("upload truncated: %q", body)
		}
		r.c.ExpectEOF()
	}
	if err := cmd.Wait(coretest.Patience); err != nil {
		t.Fatalf("after SIGTERM: %v", err)
	}
}
