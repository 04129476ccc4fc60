package coretest_test

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/dwellhttp/dwell/core/coretest"
)

// commandEnv makes the test binary, started again by StartCommand, play one of the programs of
// runCommand instead of running the tests.
const commandEnv = "CORETEST_COMMAND"

func TestMain(m *testing.M) {
	if what := os.Getenv(commandEnv); what != "" {
		runCommand(what)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// runCommand is the program the test binary plays.
func runCommand(what string) {
	switch what {
	case "panic": // the end-to-end test's failure: a panic before the readiness line
		fmt.Fprintln(os.Stderr, "starting")
		panic("boom before listening")
	case "wrong line":
		fmt.Println("hello")
		select {} // until killed
	case "fails later":
		fmt.Println("listening http://127.0.0.1:1")
		fmt.Println("more output")
		fmt.Fprintln(os.Stderr, "fatal: the database is gone")
		os.Exit(3)
	case "much": // more than a pipe holds, to both streams, before and after the readiness line
		for i := range 20000 {
			fmt.Fprintf(os.Stderr, "log line %d\n", i)
		}
		fmt.Println("listening https://127.0.0.1:1")
		for i := range 20000 {
			fmt.Printf("out line %d\n", i)
		}
	case "serves":
		fmt.Fprintln(os.Stderr, "serving")
		fmt.Println("listening http://127.0.0.1:1")
		select {}
	}
}

// A fakeT is the testing.TB StartCommand is given, to see what it reports when the command
// fails: Fatal ends the goroutine as the real one does, and the cleanups run when the test
// says.
type fakeT struct {
	testing.TB // the real test's, for what the fake does not take over
	mu         sync.Mutex
	failed     bool
	logs       []string
	cleanups   []func()
}

func (f *fakeT) Helper() {}

func (f *fakeT) record(failed bool, msg string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.failed = f.failed || failed
	f.logs = append(f.logs, msg)
}

func (f *fakeT) Fatalf(format string, args ...any) {
	f.record(true, fmt.Sprintf(format, args...))
	runtime.Goexit()
}
func (f *fakeT) Fatal(args ...any)                 { f.record(true, fmt.Sprint(args...)); runtime.Goexit() }
func (f *fakeT) Errorf(format string, args ...any) { f.record(true, fmt.Sprintf(format, args...)) }
func (f *fakeT) Error(args ...any)                 { f.record(true, fmt.Sprint(args...)) }
func (f *fakeT) Logf(format string, args ...any)   { f.record(false, fmt.Sprintf(format, args...)) }
func (f *fakeT) Log(args ...any)                   { f.record(false, fmt.Sprint(args...)) }
func (f *fakeT) Cleanup(fn func())                 { f.cleanups = append(f.cleanups, fn) }

func (f *fakeT) Failed() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.failed
}

// log returns everything reported, one report after another.
func (f *fakeT) log() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return strings.Join(f.logs, "\n")
}

// cleanup runs the cleanups, last first, as the test's end does.
func (f *fakeT) cleanup() {
	for i := len(f.cleanups) - 1; i >= 0; i-- {
		f.cleanups[i]()
	}
}

// start runs StartCommand for the program what on a fakeT, in a goroutine of its own, as Fatal
// ends it, and returns the command (nil when it failed) and the fake.
func start(t *testing.T, what string) (*coretest.Command, *fakeT) {
	f := &fakeT{TB: t}
	var cmd *coretest.Command
	done := make(chan struct{})
	go func() {
		defer close(done)
		cmd = coretest.StartCommand(f, commandEnv, what)
	}()
	coretest.Receive(t, "StartCommand's return", done)
	return cmd, f
}

// TestStartCommandShowsStderr: a process that panics before its readiness line fails the test
// with its panic, and the exit status, rather than with an empty first line alone.
func TestStartCommandShowsStderr(t *testing.T) {
	cmd, f := start(t, "panic")
	defer f.cleanup()
	got := f.log()
	if cmd != nil || !f.Failed() {
		t.Fatalf("StartCommand did not fail: %q", got)
	}
	for _, want := range []string{`first line is ""`, "exit status 2", "\tstarting\n", "\tpanic: boom before listening"} {
		if !strings.Contains(got, want) {
			t.Errorf("the failure does not say %q:\n%s", want, got)
		}
	}
}

// TestStartCommandWrongLine: a process whose first line is something else is killed, and the
// failure says what it wrote.
func TestStartCommandWrongLine(t *testing.T) {
	cmd, f := start(t, "wrong line")
	defer f.cleanup()
	got := f.log()
	if cmd != nil || !strings.Contains(got, `first line is "hello\n"`) || !strings.Contains(got, "signal: killed") ||
		!strings.Contains(got, "its standard error:\n\t(nothing)") {
		t.Errorf("StartCommand returned %v, reported:\n%s", cmd, got)
	}
}

// TestCommandWaitShowsStderr: a process that fails after its readiness line makes Wait's error
// say so, with its standard error and output; the error is still the exit's.
func TestCommandWaitShowsStderr(t *testing.T) {
	cmd, f := start(t, "fails later")
	defer f.cleanup()
	if cmd == nil {
		t.Fatalf("StartCommand failed:\n%s", f.log())
	}
	err := cmd.Wait(coretest.Patience)
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 3 || !strings.Contains(err.Error(), "\tfatal: the database is gone") ||
		!strings.Contains(err.Error(), "\tmore output") {
		t.Errorf("Wait: %v", err)
	}
	if cmd.Stderr() != "fatal: the database is gone\n" || cmd.Stdout() != "more output\n" {
		t.Errorf("Stderr %q, Stdout %q", cmd.Stderr(), cmd.Stdout())
	}
	f.cleanup()
	f.cleanups = nil
	if got := f.log(); !strings.Contains(got, "exited with exit status 3") || !strings.Contains(got, "the database is gone") {
		t.Errorf("a process that exited with an error is not in the test's log: %q", got)
	}
}

// TestCommandMuchOutput: a process that writes more than its pipes hold, before the readiness
// line and after it, is not held up; what is kept is its output's beginning and end.
func TestCommandMuchOutput(t *testing.T) {
	cmd, f := start(t, "much")
	defer f.cleanup()
	if cmd == nil {
		t.Fatalf("StartCommand failed:\n%s", f.log())
	}
	if cmd.Scheme != "https" || cmd.Addr != "127.0.0.1:1" {
		t.Errorf("scheme %q, address %q", cmd.Scheme, cmd.Addr)
	}
	if err := cmd.Wait(coretest.Patience); err != nil {
		t.Fatal(err)
	}
	for _, s := range []struct{ name, got, first, last string }{
		{"Stderr", cmd.Stderr(), "log line 0\n", "log line 19999\n"},
		{"Stdout", cmd.Stdout(), "out line 0\n", "out line 19999\n"},
	} {
		head, tail, ok := strings.Cut(s.got, " bytes left out ...\n")
		if !ok || !strings.HasPrefix(head, s.first) || !strings.HasSuffix(tail, s.last) || len(tail) != 48<<10 {
			t.Errorf("%s: %d bytes, %.40q ... %.40q", s.name, len(s.got), head, tail[max(0, len(tail)-40):])
			continue
		}
		// What was left out is exactly what is not shown.
		i := strings.LastIndex(head, "\n... ")
		left, err := strconv.Atoi(head[i+5:])
		if err != nil || i != 16<<10 || left+len(tail)+i != total(s.name) {
			t.Errorf("%s: head %d, %d left out (%v), tail %d", s.name, i, left, err, len(tail))
		}
	}
}

// total is how many bytes the "much" program writes to the stream name (its output less the
// readiness line).
func total(name string) int {
	n := 0
	for i := range 20000 {
		if name == "Stderr" {
			n += len(fmt.Sprintf("log line %d\n", i))
		} else {
			n += len(fmt.Sprintf("out line %d\n", i))
		}
	}
	return n
}

// TestCommandLogOnFailure: when the test fails while the process runs, the test's log gets
// what the process wrote; when it passes, nothing is logged.
func TestCommandLogOnFailure(t *testing.T) {
	for _, failed := range []bool{false, true} {
		cmd, f := start(t, "serves")
		if cmd == nil {
			t.Fatalf("StartCommand failed:\n%s", f.log())
		}
		if failed {
			f.Errorf("the test failed")
		}
		f.cleanup()
		got := f.log()
		if logged := strings.Contains(got, "\tserving"); logged != failed {
			t.Errorf("test failed %v: the log says %q", failed, got)
		}
	}
}
