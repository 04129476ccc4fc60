package main

import (
	"bufio"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
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
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "HELLO_RUN_MAIN=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	exited := false
	defer func() {
		if !exited {
			cmd.Process.Kill()
			<-done
		}
	}()
	addr, ok := strings.CutPrefix(strings.TrimSpace(line), "listening http://")
	if err != nil || !ok {
		t.Fatalf("first line %q (%v)", line, err)
	}

	client := &http.Client{Transport: &http.Transport{MaxConnsPerHost: 1}, Timeout: 5 * time.Second}
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

	cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-done:
		exited = true
		if err != nil {
			t.Fatalf("exit: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("still running 10 s after SIGTERM")
	}
}
