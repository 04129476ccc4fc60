//go:build linux && !dwell_portable

package core_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/dwellhttp/dwell/core"
)

// TestPollerIOUring: with Options.Poller "io_uring", each loop watches its connections through
// an io_uring instance of its own, and serves as with epoll; where io_uring cannot be used, the
// loops poll with epoll and the server says why, once.
func TestPollerIOUring(t *testing.T) {
	before := ringInstances(t)
	logged, serving := serveOnIOUring(t)
	rings := serving - before
	warned := strings.Count(logged, "io_uring cannot be used here")
	switch {
	case rings == 2 && warned == 0:
	case rings == 0 && warned == 1:
		t.Logf("io_uring cannot be used here: the loops polled with epoll (%s)", strings.TrimSpace(logged))
	default:
		t.Fatalf("%d io_uring instances for 2 loops, and the fallback logged %d times: %s", rings, warned, logged)
	}
}

// refuseRingChild is set in the environment of TestPollerIOUringRefused's child process.
const refuseRingChild = "DWELL_TEST_REFUSE_IO_URING"

// TestPollerIOUringRefused: a process whose seccomp filter refuses io_uring_setup, as Docker's
// default profile does, serves on epoll when asked for io_uring, and the server says why, once.
// The filter is for the whole process and cannot be lifted, so the server runs in a child
// process: this test binary again.
func TestPollerIOUringRefused(t *testing.T) {
	if os.Getenv(refuseRingChild) != "" {
		if err := refuseIOUringSetup(); err != nil {
			t.Skipf("no seccomp filter could be installed: %v", err)
		}
		logged, rings := serveOnIOUring(t)
		if rings != 0 {
			t.Errorf("%d io_uring instances in a process that may not set one up", rings)
		}
		if n := strings.Count(logged, "io_uring cannot be used here"); n != 1 ||
			!strings.Contains(logged, "operation not permitted") {
			t.Errorf("the fallback to epoll was logged %d times, and not as refused: %s", n, logged)
		}
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestPollerIOUringRefused$", "-test.v")
	cmd.Env = append(os.Environ(), refuseRingChild+"=1")
	out, err := cmd.CombinedOutput()
	switch {
	case err != nil:
		t.Fatalf("child: %v\n%s", err, out)
	case bytes.Contains(out, []byte("--- SKIP")):
		t.Skipf("child:\n%s", out)
	case !bytes.Contains(out, []byte("--- PASS: TestPollerIOUringRefused")):
		t.Fatalf("the child did not run the test:\n%s", out)
	}
}

// serveOnIOUring serves three requests from a server of two loops asked to poll with io_uring,
// and returns what the server logged and the io_uring instances the process had open meanwhile.
func serveOnIOUring(t *testing.T) (logged string, rings int) {
	t.Helper()
	var log bytes.Buffer
	s := core.NewServer(func(c *core.Ctx) { c.WriteString("ok " + c.Path()) },
		core.Options{Addr: "127.0.0.1:0", Loops: 2, Poller: "io_uring", Logger: slog.New(slog.NewTextHandler(&log, nil))})
	if err := s.Listen(); err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- s.ListenAndServe() }()
	defer func() {
		s.Shutdown(context.Background())
		if err := <-served; err != core.ErrServerClosed {
			t.Errorf("ListenAndServe: %v", err)
		}
	}()
	for _, path := range []string{"/a", "/b", "/c"} {
		resp, err := http.Get("http://" + s.Addr().String() + path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(b) != "ok "+path {
			t.Fatalf("GET %s: %q", path, b)
		}
	}
	return log.String(), ringInstances(t)
}

// TestPollerUnknown: a poller dwell does not know, named by Options.Poller or by DWELL_POLLER,
// fails Serve with an error that names where it came from.
func TestPollerUnknown(t *testing.T) {
	for _, c := range []struct{ option, env, want string }{
		{"kqueue", "", `Options.Poller is "kqueue"`},
		{"", "select", `DWELL_POLLER is "select"`},
	} {
		t.Setenv("DWELL_POLLER", c.env)
		s := core.NewServer(func(c *core.Ctx) {}, core.Options{Addr: "127.0.0.1:0", Poller: c.option})
		err := s.ListenAndServe()
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), `"epoll" or "io_uring"`) {
			t.Errorf("Poller %q, DWELL_POLLER %q: %v", c.option, c.env, err)
		}
	}
}

// ringInstances counts the io_uring instances the process has open.
func ringInstances(t *testing.T) int {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	n := 0
	for _, fd := range fds {
		if target, err := os.Readlink("/proc/self/fd/" + fd.Name()); err == nil && target == "anon_inode:[io_uring]" {
			n++
		}
	}
	return n
}
