package main

import (
	"io"
	"net/http"
	"os"
	"testing"

	"github.com/dwellhttp/dwell/core/coretest"
)

// TestMain runs the command itself when asked to by TestCommand.
func TestMain(m *testing.M) {
	if os.Getenv("HELLO_RUN_MAIN") == "1" {
		os.Args = []string{"hello", "-addr", "127.0.0.1:0", "-loops", "2"}
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestCommand: the command prints its address once ready, answers GET / with Hello World and
// other paths with 404 on one kept-alive connection, and exits cleanly on SIGTERM.
func TestCommand(t *testing.T) {
	cmd := coretest.StartCommand(t, "HELLO_RUN_MAIN", "1")
	addr := cmd.Addr

	client := &http.Client{Transport: &http.Transport{MaxConnsPerHost: 1}, Timeout: coretest.Patience}
	for _, tc := range []struct {
		path, ctype, body string
		status            int
	}{
		{"/", "text/plain", "Hello World", 200},
		{"/other", "", "404 page not found\n", 404},
		{"/", "text/plain", "Hello World", 200},
	} {
		resp, err := client.Get("http://" + addr + tc.path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.status || string(body) != tc.body {
			t.Errorf("GET %s: %d %q, want %d %q", tc.path, resp.StatusCode, body, tc.status, tc.body)
		}
		if tc.ctype != "" && resp.Header.Get("Content-Type") != tc.ctype {
			t.Errorf("GET %s: Content-Type %q", tc.path, resp.Header.Get("Content-Type"))
		}
	}

	cmd.Terminate()
	if err := cmd.Wait(coretest.Patience); err != nil {
		t.Fatalf("after SIGTERM: %v", err)
	}
}
