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
	line   string // the first line it printed, "" when it exited without one
	stderr *coretest.LogBuffer
	exited chan struct{} // closed once it has exited, with err
	err    error
}

// startProcess starts the command with args after its usual flags (see TestMain) and reads its
// first line; the process is killed, by its PID, if it still runs when the test ends.
func startProcess(t *testing.T, args ...string) *process {
	t.Helper()
	more, _ := json.Marshal(args)
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "CHAT_RUN_MAIN=1", "CHAT_MORE_ARGS="+string(more))
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
	line, _ := bufio.NewReader(out).ReadString('\n')
	go func() { p.err = cmd.Wait(); close(p.exited) }()
	t.Cleanup(func() {
		syscall.Kill(cmd.Process.Pid, syscall.SIGKILL)
		<-p.exited
	})
	p.line = strings.TrimSpace(line)
	return p
}

// TestCommandTLS: with -cert and -key the command says it listens on https, serves the page and
// the API over TLS — HTTP/2 to a client that offers h2, as Go's does — answers plaintext on its port
// with 400, and stops cleanly on SIGTERM.
func TestCommandTLS(t *testing.T) {
	crt := coretest.NewCertificate(t)
	certFile, keyFile, pool := crt.CertFile, crt.KeyFile, crt.Pool
	p := startProcess(t, "-cert", certFile, "-key", keyFile)
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

	resp, err := tlsClient.Get(base + "/")
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") || !strings.Contains(string(page), "<html") {
		t.Fatalf("GET /: %d %q %.80q", resp.StatusCode, resp.Header.Get("Content-Type"), page)
	}
	if resp.TLS == nil || resp.Proto != "HTTP/2.0" || resp.TLS.NegotiatedProtocol != "h2" {
		t.Fatalf("GET / came by %s, TLS %+v", resp.Proto, resp.TLS)
	}

	resp, err = tlsClient.Post(base+"/messages", "application/json", strings.NewReader(`{"name":"Ann","text":"over TLS"}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 201 {
		t.Fatalf("POST /messages: %d %s", resp.StatusCode, body)
	}
	resp, err = tlsClient.Get(base + "/messages?after=0")
	if err != nil {
		t.Fatal(err)
	}
	var r pollResult
	err = json.NewDecoder(resp.Body).Decode(&r)
	resp.Body.Close()
	if err != nil || resp.StatusCode != 200 || len(r.Messages) != 1 || r.Messages[0].Text != "over TLS" || r.Messages[0].Name != "Ann" {
		t.Fatalf("GET /messages?after=0: %d %+v (%v)", resp.StatusCode, r, err)
	}

	// Plaintext on the TLS port.
	resp, err = client.Get("http://" + addr + "/messages?after=0")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 400 {
		t.Errorf("plaintext request on the TLS port: %d, want 400", resp.StatusCode)
	}

	syscall.Kill(p.cmd.Process.Pid, syscall.SIGTERM)
	coretest.Receive(t, "the exit after SIGTERM", p.exited)
	if p.err != nil {
		t.Fatalf("after SIGTERM: %v; stderr: %s", p.err, p.stderr)
	}
}

// TestCommandTLSNeedsBoth: -cert without -key, or -key without -cert, is an error: the command
// exits with a message and never listens.
func TestCommandTLSNeedsBoth(t *testing.T) {
	crt := coretest.NewCertificate(t)
	certFile, keyFile := crt.CertFile, crt.KeyFile
	for _, args := range [][]string{{"-cert", certFile}, {"-key", keyFile}} {
		p := startProcess(t, args...)
		coretest.Receive(t, "the exit", p.exited)
		if p.line != "" || p.err == nil || p.stderr.Len() == 0 {
			t.Errorf("%q: printed %q, exited with %v, said %q", args, p.line, p.err, p.stderr)
		}
	}
}
