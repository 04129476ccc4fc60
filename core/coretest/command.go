package coretest

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
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
//
// What the process writes to its standard error (a panic's stack, the server's log) and to its
// standard output after the readiness line is kept, the first 16 KiB and the last 48 KiB of
// each, and shown when it fails: when StartCommand gets no readiness line, in the error of
// Wait, and in the test's log when the test fails or the process exited with an error.
type Command struct {
	Addr   string // from the program's first line, "listening http://ADDR" (or https://)
	Scheme string // "http", or "https" for a program serving TLS

	cmd    *exec.Cmd
	stdout *stdoutWriter
	stderr *output
	err    error         // what the process exited with, once exited is closed
	exited chan struct{} // closed when the process has exited and its output is read
}

// StartCommand starts the test binary again with env=value added to its environment, waits for
// the line "listening http://ADDR" (or "listening https://ADDR") and returns the running command. The process is killed, if
// it is still running, when the test ends. A process that ends, or writes another first line,
// fails the test with what it wrote to its standard error.
func StartCommand(t testing.TB, env, value string) *Command {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), env+"="+value)
	c := &Command{cmd: cmd, stdout: newStdoutWriter(), stderr: new(output), exited: make(chan struct{})}
	// Writers rather than pipes: exec copies both streams as they come, so that a process that
	// writes much (its log) never blocks on a pipe nobody reads, and Wait returns once both are
	// read to their end. WaitDelay bounds that only for a process whose children keep them open.
	cmd.Stdout, cmd.Stderr = c.stdout, c.stderr
	cmd.WaitDelay = Patience
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { c.err = cmd.Wait(); close(c.exited) }()
	t.Cleanup(func() {
		exitedBefore := c.hasExited()
		cmd.Process.Kill()
		<-c.exited
		if t.Failed() || exitedBefore && c.err != nil {
			t.Logf("the command %s", c.report())
		}
	})
	var line string
	select {
	case line = <-c.stdout.line:
	case <-c.exited:
		// Its output is read to the end: a line that came is waiting, or none will.
		select {
		case line = <-c.stdout.line:
		default:
			line = c.stdout.partial()
		}
	}
	url, ok := strings.CutPrefix(strings.TrimSpace(line), "listening ")
	scheme, addr, found := strings.Cut(url, "://")
	if !ok || !found || scheme != "http" && scheme != "https" {
		cmd.Process.Kill() // it said something else: it will not say it now
		<-c.exited
		t.Fatalf("coretest: the command's first line is %q, not \"listening http://ADDR\": it %s", line, c.report())
	}
	c.Addr, c.Scheme = addr, scheme
	return c
}

// Terminate sends the process SIGTERM, which a server program answers with a graceful shutdown.
func (c *Command) Terminate() error {
	return c.cmd.Process.Signal(syscall.SIGTERM)
}

// Wait waits at most d for the process to exit and returns what it exited with: nil for a clean
// exit, an error for any other, or for a process still running after d. The error ends with
// what the process wrote to its standard error; it wraps the *exec.ExitError of an exit.
func (c *Command) Wait(d time.Duration) error {
	select {
	case <-c.exited:
		if c.err != nil {
			return fmt.Errorf("%w; %s", c.err, c.output())
		}
		return nil
	case <-time.After(d):
		return fmt.Errorf("still running %v later; %s", d, c.output())
	}
}

// Stderr returns what the process has written to its standard error so far: all of it up to
// 64 KiB, and beyond that its first 16 KiB and last 48 KiB with a line saying how much was left
// out between them.
func (c *Command) Stderr() string { return c.stderr.String() }

// Stdout returns what the process has written to its standard output after the readiness line
// so far, kept as Stderr's is.
func (c *Command) Stdout() string { return c.stdout.rest.String() }

// hasExited reports whether the process has exited.
func (c *Command) hasExited() bool {
	select {
	case <-c.exited:
		return true
	default:
		return false
	}
}

// report says how the process ended, once it has, and what it wrote.
func (c *Command) report() string {
	how := "exited cleanly"
	if c.err != nil {
		how = "exited with " + c.err.Error()
	}
	return how + "; " + c.output()
}

// output returns what the process wrote, for a failure's message.
func (c *Command) output() string {
	s := "its standard error:\n" + indent(c.Stderr(), "(nothing)")
	if out := c.Stdout(); out != "" {
		s += "\nits standard output after the first line:\n" + indent(out, "")
	}
	return s
}

// indent indents text by a tab, so that it stands apart in a test's log; empty text is none.
func indent(text, none string) string {
	text = strings.TrimRight(text, "\n")
	if text == "" {
		return "\t" + none
	}
	return "\t" + strings.ReplaceAll(text, "\n", "\n\t")
}

// An output keeps what a process writes to one of its streams, bounded: the first headMax
// bytes, where a panic's message and stack begin, and the last tailMax, where a log ends.
type output struct {
	mu         sync.Mutex
	head, tail []byte
	n          int64 // bytes written in all
}

const (
	headMax = 16 << 10
	tailMax = 48 << 10
)

func (o *output) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	n := len(p)
	o.n += int64(n)
	k := min(headMax-len(o.head), len(p))
	o.head = append(o.head, p[:k]...)
	o.tail = append(o.tail, p[k:]...)
	if len(o.tail) > 2*tailMax { // trimmed once in a while, not at every write
		o.tail = append(o.tail[:0], o.tail[len(o.tail)-tailMax:]...)
	}
	return n, nil
}

// String returns what was kept, with a line saying how much was left out, if anything was.
func (o *output) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	tail := o.tail
	if len(tail) > tailMax {
		tail = tail[len(tail)-tailMax:]
	}
	left := o.n - int64(len(o.head)) - int64(len(tail))
	if left == 0 {
		return string(o.head) + string(tail)
	}
	return string(o.head) + "\n... " + strconv.FormatInt(left, 10) + " bytes left out ...\n" + string(tail)
}

// A stdoutWriter takes a process's standard output: its first line, the readiness line, goes
// to StartCommand, and the rest is kept as its standard error is.
type stdoutWriter struct {
	mu    sync.Mutex
	first []byte      // the first line, as it comes
	done  bool        // the first line is complete (or too long to be the readiness line)
	line  chan string // gets the first line, once
	rest  output
}

// maxFirstLine bounds the first line: the readiness line is short, and anything longer is
// some other output.
const maxFirstLine = 4 << 10

func newStdoutWriter() *stdoutWriter { return &stdoutWriter{line: make(chan string, 1)} }

func (w *stdoutWriter) Write(p []byte) (int, error) {
	n := len(p)
	w.mu.Lock()
	if !w.done {
		i := bytes.IndexByte(p, '\n')
		if i < 0 && len(w.first)+len(p) <= maxFirstLine {
			w.first = append(w.first, p...)
			w.mu.Unlock()
			return n, nil
		}
		if i < 0 || len(w.first)+i+1 > maxFirstLine {
			i = maxFirstLine - len(w.first) - 1
		}
		w.first = append(w.first, p[:i+1]...)
		p = p[i+1:]
		w.done = true
		w.line <- string(w.first)
	}
	w.mu.Unlock()
	w.rest.Write(p)
	return n, nil
}

// partial returns what came of the first line when no whole line did.
func (w *stdoutWriter) partial() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return string(w.first)
}
