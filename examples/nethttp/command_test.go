package main

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/dwellhttp/dwell/core/coretest"
)

// TestMain runs the command itself when asked to by TestCommand.
func TestMain(m *testing.M) {
	if dir := os.Getenv("NETHTTP_RUN_MAIN"); dir != "" {
		os.Args = []string{"nethttp", "-addr", "127.0.0.1:0", "-dir", dir}
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestCommand: the program serves -dir and its handlers, and on SIGTERM ends a wait still
// parked (its context cancelled at the end of the grace period) and exits cleanly.
func TestCommand(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "f.txt"), []byte("from -dir"), 0o644)
	cmd := coretest.StartCommand(t, "NETHTTP_RUN_MAIN", dir)
	base := "http://" + cmd.Addr
	for path, want := range map[string]string{"/std/hello": "Hello World", "/std/files/f.txt": "from -dir"} {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(b) != want {
			t.Errorf("%s: %q", path, b)
		}
	}
	wait := coretest.Dial(t, cmd.Addr)
	wait.Send("GET /std/wait HTTP/1.1\r\nHost: h\r\n\r\n")
	resp, err := http.ReadResponse(wait.R, nil)
	if err != nil {
		t.Fatal(err)
	}
	cmd.Terminate()
	if b, err := io.ReadAll(resp.Body); len(b) != 0 || err != nil {
		t.Errorf("wait after SIGTERM: %q %v", b, err)
	}
	if err := cmd.Wait(10 * time.Second); err != nil {
		t.Errorf("after SIGTERM: %v", err)
	}
}
