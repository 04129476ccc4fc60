package browser

import (
	"bufio"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/dwellhttp/dwell/core/coretest"
)

// A site is what a page is opened on: the chat served in this process (server) or by a
// program of its own (program).
type site interface{ url() string }

// A program is a chat server run as a process of its own, from a binary built for the test, so
// that it can be killed as a crash kills it (SIGKILL: no shutdown, nothing saved) and started
// again on the same address.
type program struct {
	t    *testing.T
	bin  string
	args []string // besides -addr
	addr string   // host:port, fixed by the first start

	cmd    *exec.Cmd
	exited chan struct{}       // closed once cmd has exited
	stderr *coretest.LogBuffer // what the program said, shown if the test fails
}

// build compiles the main package in dir (a path from this module's directory, which is where
// go test runs) into a binary in a temporary directory, and returns its path. The package is
// built in its own module, as its users build it.
func build(t *testing.T, dir string) string {
	t.Helper()
	abs, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), filepath.Base(abs))
	cmd := exec.Command("go", "build", "-o", bin, ".")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build in %s: %v\n%s", dir, err, out)
	}
	return bin
}

// startProgram runs bin with args on a free loopback port until the test ends.
func startProgram(t *testing.T, bin string, args ...string) *program {
	t.Helper()
	p := &program{t: t, bin: bin, args: args, addr: "127.0.0.1:0", stderr: new(coretest.LogBuffer)}
	p.start()
	t.Cleanup(func() {
		p.kill()
		if t.Failed() && p.stderr.Len() > 0 {
			t.Logf("%s said:\n%s", filepath.Base(bin), p.stderr)
		}
	})
	return p
}

func (p *program) url() string { return "http://" + p.addr + "/" }

// start starts the program on its address and waits until it says it listens there.
func (p *program) start() {
	p.t.Helper()
	cmd := exec.Command(p.bin, append([]string{"-addr", p.addr}, p.args...)...)
	cmd.Stderr = p.stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		p.t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		p.t.Fatal(err)
	}
	p.cmd, p.exited = cmd, make(chan struct{})
	// The first line, before Wait: Wait closes the pipe once the process has exited.
	line, err := bufio.NewReader(out).ReadString('\n')
	go func(exited chan struct{}) { cmd.Wait(); close(exited) }(p.exited)
	addr, ok := strings.CutPrefix(strings.TrimSpace(line), "listening http://")
	if err != nil || !ok {
		p.kill()
		p.t.Fatalf("%s: first line %q (%v)", filepath.Base(p.bin), line, err)
	}
	p.addr = addr
}

// kill sends the process SIGKILL, by its PID, and waits until it has exited. It does nothing
// when the process has exited already.
func (p *program) kill() {
	select {
	case <-p.exited:
		return
	default:
	}
	syscall.Kill(p.cmd.Process.Pid, syscall.SIGKILL)
	<-p.exited
}

// cutPolls makes the page's polls (GET /messages?after=...) and new sockets (GET /ws) fail
// before they leave the browser, as a network that drops them would, or lets them through
// again; its posts go through either way. A poll already waiting on the server is not cut: it
// ends as it would. A socket already open stays open, but hears nothing meanwhile (see block),
// so the tests that cut block sockets from the start. Sockets blocked that way stay blocked.
func (u *user) cutPolls(cut bool) {
	u.t.Helper()
	u.block(cut, "cut", pollURLs, socketURLs)
}
