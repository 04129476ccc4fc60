package coretest

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A Command is a server program under test, run as a process of its own so that its flags,
// its readiness line and its signal handling are tested as users run them. The process is the
// test binary itself, started again with an environment variable that the package's TestMain
// answers by calling main:
//
//	func TestMain(m *testing.M) {
//		if os.Getenv("HELLO_RUN_MAIN") != "" {
//			os.Args = []string{"hello", "-addr", "127.0.0.1:0"}
//			main()
//			os.Exit(0)
//		}
//		os.Exit(m.Run())
//	}
type Command struct {
	Addr   string // from the program's first line, "listening http://ADDR" (or https://)
	Scheme string // "http", or "https" for a program serving TLS

	cmd    *exec.Cmd
	err    error         // what the process exited with, once exited is closed
	exited chan struct{} // closed when the process has exited
}

// StartCommand starts the test binary again with env=value added to its environment, waits for
// the line "listening http://ADDR" (or "listening https://ADDR") and returns the running command. The process is killed, if
// it is still running, when the test ends.
func StartCommand(t testing.TB, env, value string) *Command {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), env+"="+value)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &Command{cmd: cmd, exited: make(chan struct{})}
	line, err := bufio.NewReader(out).ReadString('\n')
	go func() { c.err = cmd.Wait(); close(c.exited) }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-c.exited
	})
	url, ok := strings.CutPrefix(strings.TrimSpace(line), "listening ")
	scheme, addr, found := strings.Cut(url, "://")
	if err != nil || !ok || !found || scheme != "http" && scheme != "https" {
		t.Fatalf("first line %q (%v)", line, err)
	}
	c.Addr, c.Scheme = addr, scheme
	return c
}

// Terminate sends the process SIGTERM, which a server program answers with a graceful shutdown.
func (c *Command) Terminate() error {
	return c.cmd.Process.Signal(syscall.SIGTERM)
}

// Wait waits at most d for the process to exit and returns what it exited with: nil for a clean
// exit, an error for any other, or for a process still running after d.
func (c *Command) Wait(d time.Duration) error {
	select {
	case <-c.exited:
		return c.err
	case <-time.After(d):
		return fmt.Errorf("still running %v later", d)
	}
}
