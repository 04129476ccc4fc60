//go:build linux && !dwell_portable

package http1

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dwellhttp/dwell/core/internal/netpoll"
	"github.com/dwellhttp/dwell/core/internal/serve"
)

// emfileChild names the poller of the server TestAcceptBackoffOnEMFILE runs in a child process.
const emfileChild = "DWELL_TEST_EMFILE_CHILD"

// TestAcceptBackoffOnEMFILE: a server out of descriptors backs off accepting and says why,
// goes on serving the connections it has, and accepts those that waited once descriptors are
// free again — on epoll and on io_uring alike. The server runs in a child process (this test
// binary again) whose descriptor limit leaves it room for a few connections, so that the
// limit is the server's alone and not its clients'.
func TestAcceptBackoffOnEMFILE(t *testing.T) {
	if poller := os.Getenv(emfileChild); poller != "" {
		serveOutOfDescriptors(t, poller)
		return
	}
	for _, poller := range []string{"epoll", "io_uring"} {
		t.Run(poller, func(t *testing.T) {
			var log bytes.Buffer
			cmd, stdin, stdout := startChild(t, "TestAcceptBackoffOnEMFILE", emfileChild+"="+poller, &log)
			// Last, once the clients have closed: the child's server shuts down and it exits, and
			// its log says why it stopped accepting.
			defer func() {
				stdin.Close()
				rest, _ := io.ReadAll(stdout)
				if err := cmd.Wait(); err != nil {
					t.Errorf("child: %v\n%s%s", err, rest, &log)
					return
				}
				if t.Failed() || t.Skipped() {
					return
				}
				switch out := log.String(); {
				case !strings.Contains(out, `msg="dwell: accept failing; backing off"`) ||
					!strings.Contains(out, "too many open files"):
					t.Errorf("the server did not say it backed off for want of descriptors:\n%s", out)
				case strings.Contains(out, "cannot be used here"):
					t.Errorf("the server did not serve on %s:\n%s", poller, out)
				}
			}()
			out := bufio.NewScanner(stdout)
			if !out.Scan() {
				t.Fatalf("child said nothing: %v", out.Err())
			}
			var addr string
			if reason, skip := strings.CutPrefix(out.Text(), "skip "); skip {
				t.Skip(reason)
			} else if addr, _ = strings.CutPrefix(out.Text(), "listening "); addr == "" {
				t.Fatalf("child said %q", out.Text())
			}

			// Many more connections than the server has room for, each with its request (the
			// listener defers accepting a connection until its first bytes): the ones it cannot
			// accept wait in the listener's backlog.
			conns := make([]net.Conn, 12)
			for i := range conns {
				var err error
				if conns[i], err = net.Dial("tcp", addr); err != nil {
					t.Fatal(err)
				}
				defer conns[i].Close()
				conns[i].SetDeadline(time.Now().Add(patience)) // a broken back-off fails, not hangs
				fmt.Fprintf(conns[i], "GET /%d HTTP/1.1\r\nHost: x\r\n\r\n", i)
			}
			// Each is answered in turn: the first ones were accepted before the descriptors ran
			// out, the others once closing those freed some.
			for i, c := range conns {
				if body, err := bodyOf(bufio.NewReader(c)); err != nil || body != fmt.Sprint("ok /", i) {
					t.Fatalf("connection %d: %q, %v", i, body, err)
				}
				c.Close()
			}
		})
	}
}

// serveOutOfDescriptors is the child's part: it serves on poller with room for a few more
// descriptors, says where on its standard output, and ends when its standard input does.
func serveOutOfDescriptors(t *testing.T, poller string) {
	if poller == "io_uring" {
		if p, err := netpoll.NewRingPoller(1); err != nil {
			fmt.Println("skip io_uring cannot be used here:", err)
			return
		} else {
			p.Close()
		}
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	_, addr := startServer(t, func(c *serve.Ctx) { c.WriteString("ok " + c.Path()) },
		serve.Options{Loops: 1, Poller: poller, Logger: log})
	// One exchange first, so that the loop holds all it opens for itself before the limit.
	c := dial(t, addr)
	c.Send("GET /warm-up HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
	if _, body := c.Response("GET"); body != "ok /warm-up" {
		t.Fatalf("warm-up: %q", body)
	}
	c.ExpectEOF()
	c.Close()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	lim.Cur = uint64(len(fds) + 3)
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	fmt.Println("listening", addr)
	io.Copy(io.Discard, os.Stdin)
}
