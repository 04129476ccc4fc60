package main

import (
	"bufio"
	"crypto/tls"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/dwellhttp/dwell/core/coretest"
)

// A process is the command run as coretest.StartCommand runs it, with more flags, for the tests
// that read its first line themselves: coretest's waits for "listening http://" only.
type process struct {
	cmd    *exec.Cmd
	line   string        // the first line it printed, "" when it exited without one
	out    *bufio.Reader // the rest of its stdout
	stderr *coretest.LogBuffer
	exited chan struct{} // closed once it has exited, with err
	err    error
}

// startProcess starts the command with its files in dir and args after its usual flags (see
// TestMain) and reads its first line; the process is killed, by its PID, if it still runs when
// the test ends.
func startProcess(t *testing.T, dir string, args ...string) *process {
	t.Helper()
	more, _ := json.Marshal(args)
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "TODO_RUN_MAIN="+dir, "TODO_MORE_ARGS="+string(more))
	p := &process{cmd: cmd, stderr: new(coretest.LogBuffer), exited: make(chan struct{})}
	cmd.Stderr = p.stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// The first line, before Wait: Wait closes the pipe once the process has exited.
	p.out = bufio.NewReader(out)
	line, _ := p.out.ReadString('\n')
	go func() { p.err = cmd.Wait(); close(p.exited) }()
	t.Cleanup(func() {
		syscall.Kill(cmd.Process.Pid, syscall.SIGKILL)
		<-p.exited
	})
	p.line = strings.TrimSpace(line)
	return p
}

// TestCommandTLS: with -cert and -key the command says it listens on https and serves the API
// over TLS — HTTP/2 to a client that offers h2, as Go's does — with its access log, and stops cleanly on
// SIGTERM.
func TestCommandTLS(t *testing.T) {
	crt := coretest.NewCertificate(t)
	certFile, keyFile, pool := crt.CertFile, crt.KeyFile, crt.Pool
	dir := t.TempDir()
	p := startProcess(t, dir, "-cert", certFile, "-key", keyFile)
	addr, ok := strings.CutPrefix(p.line, "listening https://")
	if !ok {
		t.Fatalf("first line %q; stderr: %s", p.line, p.stderr)
	}
	base := "https://" + addr
	tlsClient := &http.Client{Timeout: coretest.Patience, Transport: &http.Transport{
		TLSClientConfig:   &tls.Config{RootCAs: pool},
		ForceAttemptHTTP2: true,
		MaxConnsPerHost:   1,
	}}
	send := func(method, url, body string) (*http.Response, string) {
		t.Helper()
		req, err := http.NewRequest(method, url, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := tlsClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.TLS == nil || resp.Proto != "HTTP/2.0" || resp.TLS.NegotiatedProtocol != "h2" {
			t.Fatalf("%s %s came by %s, TLS %+v", method, url, resp.Proto, resp.TLS)
		}
		return resp, string(b)
	}

	resp, body := send("POST", base+"/todos", `{"title":"over TLS"}`)
	if resp.StatusCode != 201 || !strings.HasPrefix(resp.Header.Get("Location"), "/todos/") {
		t.Fatalf("POST /todos: %d %q %s", resp.StatusCode, resp.Header.Get("Location"), body)
	}
	resp, body = send("GET", base+resp.Header.Get("Location"), "")
	var todo struct {
		Title string `json:"title"`
		Done  bool   `json:"done"`
	}
	if resp.StatusCode != 200 || json.Unmarshal([]byte(body), &todo) != nil || todo.Title != "over TLS" || todo.Done {
		t.Fatalf("GET the todo: %d %s", resp.StatusCode, body)
	}
	if resp.Header.Get("X-Request-Id") == "" {
		t.Errorf("GET the todo: no X-Request-Id")
	}

	syscall.Kill(p.cmd.Process.Pid, syscall.SIGTERM)
	coretest.Receive(t, "the exit after SIGTERM", p.exited)
	if p.err != nil {
		t.Fatalf("after SIGTERM: %v; stderr: %s", p.err, p.stderr)
	}
	if lines := accessLog(t, dir); len(lines["/todos"]) != 1 || lines["/todos"][0]["status"] != float64(201) {
		t.Errorf("access log of POST /todos: %v", lines["/todos"])
	}
}

// TestCommandTLSNeedsBoth: -cert without -key, or -key without -cert, is an error: the command
// exits with a message and never listens.
func TestCommandTLSNeedsBoth(t *testing.T) {
	crt := coretest.NewCertificate(t)
	certFile, keyFile := crt.CertFile, crt.KeyFile
	for _, args := range [][]string{{"-cert", certFile}, {"-key", keyFile}} {
		p := startProcess(t, t.TempDir(), args...)
		coretest.Receive(t, "the exit", p.exited)
		if p.line != "" || p.err == nil || p.stderr.Len() == 0 {
			t.Errorf("%q: printed %q, exited with %v, said %q", args, p.line, p.err, p.stderr)
		}
	}
}
