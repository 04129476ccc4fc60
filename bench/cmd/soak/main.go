// Command soak runs dwell under every kind of client at once and reports what went wrong: each
// request that failed other than by the client's own doing (a cancellation, a connection it
// reset), what the server logged at Warn or above, and whether its shutdown under the load was
// clean. The server is servers/dwell-soak, built with the race detector and pinned to CPU 0; the
// clients run in this process, on CPU 1. Modes:
//
//   - mix (the default): for -d, HTTP/1.1 keep-alive and h2c (both over TLS with -tls) through
//     Go's clients, each asking for every exchange the server has, some requests cancelled
//     mid-way; pipelined HTTP/1.1; connections reset or half-closed mid-request; WebSockets
//     (gorilla) in both styles; long polls checking that the topic loses no value. Then the
//     server's /stats, and a shutdown (SIGTERM) with the clients still running, whose refused
//     connections are expected and every other failure is not.
//   - shutdown: -runs times, a fresh server under 8 clients on one connection (h2c, or HTTP/1.1
//     keep-alive with -h1) — GET /sleep?ms=50 and POST /echo of 300 KB — shut down after 1 s:
//     the requests that failed other than by a refused connection.
//   - grace: -runs times, a fresh server whose grace period (300 ms) ends under 16 clients, 8 on
//     one h2c connection and 8 on HTTP/1.1 keep-alive, waiting in handlers longer than it —
//     GET /sleep?ms=5000 (Suspend, woken at its end) and GET /do?ms=1500 (wait.Do, which lets
//     its function finish): each answered, by the handler or with the server's 503, none cut.
//   - streams: for -d, 150 streams at once on one h2c connection, a third of them cancelled
//     within 20 ms, to a handler that waits on wait.Do: the requests that failed other than by
//     their cancellation.
//
// Load and faults target 127.0.0.1 only.
//
//	cd bench && go run ./cmd/soak [-mode mix|shutdown|grace|streams] [-d 60s] [-tls] [-poller io_uring] [-loops 2] [-maxconns N]
package main

import (
	"bufio"
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/dwellhttp/dwell/bench/internal/peer"
	"golang.org/x/sys/unix"
)

var (
	mode        = flag.String("mode", "mix", "mix, shutdown, grace or streams")
	dur         = flag.Duration("d", 60*time.Second, "how long the mix or the streams run")
	scale       = flag.Int("n", 2, "mix: clients of each kind (twice as many for HTTP/1.1 and h2c)")
	useTLS      = flag.Bool("tls", false, "mix: HTTP/1.1 and h2 over TLS (no pipelining, resets or WebSockets)")
	dwellPoller = flag.String("poller", "", "DWELL_POLLER for the server: epoll or io_uring")
	loops       = flag.Int("loops", 2, "the server's Options.Loops")
	maxConns    = flag.Int("maxconns", 0, "the server's Options.MaxConns")
	runs        = flag.Int("runs", 6, "shutdown and grace: how many servers to shut down")
	h1          = flag.Bool("h1", false, "shutdown: HTTP/1.1 keep-alive instead of h2c")
	norace      = flag.Bool("norace", false, "build the server without the race detector")
	only        = flag.Int("only", -1, "mix: make only the requests of this kind (0 to 11: see request), to narrow a failure down")
	debug       = flag.Bool("debug", false, "the server logs at Debug")
)

const fileSize = 1000 // the bytes of the file the server serves at /file

func main() {
	flag.Parse()
	if runtime.NumCPU() >= 2 {
		var set unix.CPUSet
		set.Set(1)
		unix.SchedSetaffinity(0, &set) // the clients on CPU 1, the server on CPU 0
	}
	work, err := os.MkdirTemp("", "dwell-soak-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(work)
	file := filepath.Join(work, "file")
	if err := os.WriteFile(file, make([]byte, fileSize), 0o644); err != nil {
		log.Fatal(err)
	}
	bin := filepath.Join(work, "dwell-soak")
	build := []string{"build", "-race", "-o", bin, "./servers/dwell-soak"}
	if *norace {
		build = []string{"build", "-o", bin, "./servers/dwell-soak"}
	}
	if out, err := exec.Command("go", build...).CombinedOutput(); err != nil {
		log.Fatalf("go %s: %v\n%s", strings.Join(build, " "), err, out)
	}
	start := func() *server { return startServer(bin, file) }
	switch *mode {
	case "mix":
		mix(start())
	case "shutdown":
		shutdowns(start)
	case "grace":
		graceEnds(func() *server { return startServer(bin, file, "-grace", graceMode.String()) })
	case "streams":
		streams(start())
	default:
		log.Fatalf("-mode %q: mix, shutdown, grace or streams", *mode)
	}
}

// A server is a dwell-soak process.
type server struct {
	cmd    *exec.Cmd
	addr   string
	stderr *strings.Builder // what it logged, complete once it has exited
	done   chan struct{}    // closed once it has exited
	ending atomic.Bool      // it is about to be told to shut down, or has been
}

// markStopping says that what follows happens during the shutdown.
func (s *server) markStopping() { s.ending.Store(true) }

// stopping reports whether the shutdown has begun (markStopping).
func (s *server) stopping() bool { return s.ending.Load() }

// startServer starts bin on a free port, with more flags if given, pinned to CPU 0 where
// taskset is, and waits until it listens.
func startServer(bin, file string, more ...string) *server {
	args := []string{"-file", file, "-loops", fmt.Sprint(*loops), "-maxconns", fmt.Sprint(*maxConns)}
	args = append(args, more...)
	if *useTLS {
		cert, key, err := peer.WriteCertificate(filepath.Join(filepath.Dir(bin), "tls"))
		if err != nil {
			log.Fatal(err)
		}
		args = append(args, "-cert", cert, "-key", key)
	}
	if *debug {
		args = append(args, "-debug")
	}
	cmd := exec.Command(bin, args...)
	if ts, err := exec.LookPath("taskset"); err == nil && runtime.NumCPU() >= 2 {
		cmd = exec.Command(ts, append([]string{"-c", "0", bin}, args...)...)
	}
	cmd.Env = os.Environ()
	if *dwellPoller != "" {
		cmd.Env = append(cmd.Env, "DWELL_POLLER="+*dwellPoller)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	s := &server{cmd: cmd, stderr: &strings.Builder{}, done: make(chan struct{})}
	cmd.Stderr = s.stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		log.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		log.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if !strings.HasPrefix(line, "listening ") {
		cmd.Process.Kill()
		log.Fatalf("the server did not listen: %q %v", line, err)
	}
	s.addr = strings.TrimSpace(strings.TrimPrefix(line, "listening "))
	go func() {
		cmd.Wait()
		close(s.done)
	}()
	return s
}

// stop has the server shut down (SIGTERM) and waits for it; it reports whether the shutdown
// was clean: Shutdown and ListenAndServe returned what a graceful shutdown returns, and nothing
// else was logged.
func (s *server) stop() (clean bool, log string) { return s.stopWith("<nil>") }

// stopWith is stop for a shutdown that returns shutdownErr: "<nil>" for one that ends within
// its grace period, "context deadline exceeded" for one whose grace period ends first.
func (s *server) stopWith(shutdownErr string) (clean bool, log string) {
	s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(30 * time.Second):
		s.cmd.Process.Kill()
		<-s.done
		return false, s.stderr.String() + "(killed: still running 30 s after SIGTERM)\n"
	}
	log = s.stderr.String()
	lines := strings.Split(strings.TrimSuffix(log, "\n"), "\n")
	slices.Sort(lines) // the two lines are printed by two goroutines
	return slices.Equal(lines, []string{"served: dwell: server closed", "shutdown: " + shutdownErr}), log
}
