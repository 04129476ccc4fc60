package http1

import (
	"crypto/tls"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dwellhttp/dwell/core/internal/serve"
)

// TestStallBlamesOnlyApplicationCode recreates the conditions under which stall reports once
// blamed handlers for what they did not do — thousands of goroutines, a storm of new TLS
// connections, CPU hogs in the process and beside it — with handlers that never block: no
// report blames application code, whatever the loop's turns take. Then a handler that sleeps
// for a second on the loop is reported, with its own frame and what it waited in.
func TestStallBlamesOnlyApplicationCode(t *testing.T) {
	if os.Getenv("DWELL_TEST_HOG") != "" {
		t.Skip("a hog's process")
	}
	const storm = 200
	var logs logBuffer
	pki := newPKI(t)
	_, addr := startTLS(t, pki, func(c *serve.Ctx) {
		if c.Path() == "/sleep" {
			time.Sleep(time.Second) // the stall: a blocking call on the loop
		}
		c.WriteString("hello")
	}, serve.Options{Logger: newTestLogger(&logs), HeaderTimeout: time.Minute}) // a slow machine is no reason to give up

	// Goroutines that wait, as an application's do: what a look at the goroutines must go
	// through.
	park := make(chan struct{})
	defer close(park)
	for range 5000 {
		go func() { <-park }()
	}
	// CPU hogs: goroutines of the process, which compete with the loop in Go's scheduler, and
	// processes beside it, which compete with its thread in the system's.
	var stop atomic.Bool
	defer stop.Store(true)
	for range 2 * runtime.GOMAXPROCS(0) {
		go func() {
			for !stop.Load() {
			}
		}()
	}
	for range 2 {
		hog := exec.Command(os.Args[0], "-test.run=^TestHogProcess$")
		hog.Env = append(os.Environ(), "DWELL_TEST_HOG=1")
		if err := hog.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { hog.Process.Kill(); hog.Wait() })
	}

	// A client on an open connection asks again and again while a storm of new TLS clients
	// connects.
	open, r := tlsDial(t, addr, pki.clientConfig(0))
	var probes atomic.Int64
	probeDone := make(chan error, 1)
	stormDone := make(chan struct{})
	go func() {
		for {
			select {
			case <-stormDone:
				probeDone <- nil
				return
			default:
			}
			if _, err := fmt.Fprintf(open, "GET / HTTP/1.1\r\nHost: h\r\n\r\n"); err != nil {
				probeDone <- err
				return
			}
			if body := readBody(t, r); body != "hello" {
				probeDone <- fmt.Errorf("body %q", body)
				return
			}
			probes.Add(1)
		}
	}()
	var wg sync.WaitGroup
	var failed atomic.Int64
	var firstErr atomic.Value
	for range storm {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := tls.Dial("tcp", addr, pki.clientConfig(0))
			if err != nil {
				failed.Add(1)
				firstErr.CompareAndSwap(nil, err)
				return
			}
			fmt.Fprintf(c, "GET / HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n")
			buf := make([]byte, 512)
			for {
				if _, err := c.Read(buf); err != nil {
					break
				}
			}
			c.Close()
		}()
	}
	wg.Wait()
	close(stormDone)
	if err := receive(t, "the probing client", probeDone); err != nil {
		t.Fatal(err)
	}
	if n := failed.Load(); n != 0 {
		t.Errorf("%d of the storm's %d connections failed: %v", n, storm, firstErr.Load())
	}
	if n := strings.Count(logs.String(), "loop stalled"); n != 0 {
		t.Errorf("%d reports blamed application code that never blocked (%d requests on the open connection):\n%s", n, probes.Load(), logs.String())
	}

	// The stall of a handler that blocks is reported, with its frame.
	if _, err := fmt.Fprintf(open, "GET /sleep HTTP/1.1\r\nHost: h\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	if body := readBody(t, r); body != "hello" {
		t.Fatalf("body %q", body)
	}
	for deadline := time.Now().Add(patience); !strings.Contains(logs.String(), "path=/sleep"); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no report of the stall after %v; the log:\n%s", patience, logs.String())
		}
	}
	var line string
	for l := range strings.Lines(logs.String()) {
		if strings.Contains(l, "path=/sleep") {
			line = l
		}
	}
	for _, want := range []string{"application code blocked", "in=time.Sleep", "frame=\"github.com/dwellhttp/dwell/core/internal/http1.TestStallBlamesOnlyApplicationCode.func1 (", "stallload_test.go:", "path=/sleep"} {
		if !strings.Contains(line, want) {
			t.Errorf("the stall's report lacks %q:\n%s", want, line)
		}
	}
}

// TestHogProcess is a CPU hog for TestStallBlamesOnlyApplicationCode, in a process of its own:
// it spins until it is killed.
func TestHogProcess(t *testing.T) {
	if os.Getenv("DWELL_TEST_HOG") == "" {
		t.Skip("run by TestStallBlamesOnlyApplicationCode")
	}
	var never atomic.Bool
	for !never.Load() {
	}
}
