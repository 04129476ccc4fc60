package interop

import (
	"bytes"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/core/coretest"
	"github.com/dwellhttp/dwell/router"
)

// fixedStackStart is the GODEBUG setting under which new goroutines start with 2 KiB stacks, as
// core's footprint test runs (core/internal/serve/footprint_test.go): without it the runtime sizes new stacks
// to the average its last collection found, and the figure would depend on the tests before.
const fixedStackStart = "adaptivestackstart=0"

// footprintCase is the environment variable that runs one case of TestIdleFootprint, in a
// process of its own.
const footprintCase = "INTEROP_FOOTPRINT_CASE"

// The handshake and one message of the footprint's clients, written by hand so that the client
// side allocates nothing while it is measured: a WebSocket upgrade, then a masked text frame
// "hi" (with a zero mask, so the payload reads as it is), and the server's echo of it.
const (
	upgradeRequest = "GET /ws HTTP/1.1\r\nHost: h\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
		"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
	maskedHi = "\x81\x82\x00\x00\x00\x00hi"
	echoedHi = "\x81\x02hi"
)

// A footprint is what n connections cost, per connection.
type footprint struct {
	heap, stack, goroutines float64
}

// measure dials n connections to addr, upgrades each (unless raw) and has it echo one message,
// leaving it idle, and returns what the process holds per connection, over what it held before:
// the heap in use, goroutine stacks and goroutines. The clients are counted too; held, when not
// nil, reports whether the server has taken every connection.
func measure(t *testing.T, addr string, n int, raw bool, held func() bool) footprint {
	conns := make([]net.Conn, n)
	bufs := make([]byte, n*512) // the clients' read buffers, allocated before the baseline
	exchange := func(i int, req, until string) {
		buf := bufs[i*512 : (i+1)*512]
		if _, err := conns[i].Write([]byte(req)); err != nil {
			t.Fatal(err)
		}
		for k := 0; !bytes.HasSuffix(buf[:k], []byte(until)); {
			m, err := conns[i].Read(buf[k:])
			if err != nil {
				t.Fatalf("connection %d after %q: %v (read %q)", i, req, err, buf[:k+m])
			}
			k += m
		}
	}
	var before, after runtime.MemStats
	runtime.GC() // twice: what sync.Pools hold survives one collection, and would be counted
	runtime.GC() // as freed by the connections
	runtime.ReadMemStats(&before)
	g := runtime.NumGoroutine()
	for i := range conns {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		c.SetDeadline(time.Now().Add(coretest.Patience))
		conns[i] = c
		if !raw {
			exchange(i, upgradeRequest, "\r\n\r\n")
			exchange(i, maskedHi, echoedHi)
		}
	}
	if held != nil {
		coretest.WaitFor(t, "every connection taken", held)
	}
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&after)
	g = runtime.NumGoroutine() - g
	runtime.KeepAlive(bufs) // the clients' side is in the figure, and is taken out (see rawCost)
	for _, c := range conns {
		c.Close()
	}
	return footprint{
		heap:       float64(int64(after.HeapInuse)-int64(before.HeapInuse)) / float64(n),
		stack:      float64(int64(after.StackInuse)-int64(before.StackInuse)) / float64(n),
		goroutines: float64(g) / float64(n),
	}
}

// rawCost measures n connections to a listener that only holds them: the clients' share of
// measure's figure, and the accepted sockets'.
func rawCost(t *testing.T, n int) footprint {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	accepted := make([]net.Conn, 0, n)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			accepted = append(accepted, c)
			mu.Unlock()
		}
	}()
	f := measure(t, ln.Addr().String(), n, true, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(accepted) == n
	})
	ln.Close()
	mu.Lock()
	for _, c := range accepted {
		c.Close()
	}
	mu.Unlock()
	return f
}

// TestIdleFootprint measures what an idle WebSocket costs its server in all: through the bridge,
// with gorilla/websocket's and coder/websocket's echo servers (their handler's goroutine, the
// hijacked connection, the libraries' buffers); natively, a connection handed over
// (core.Ctx.HandOver) to a Protocol that holds nothing — the floor that a WebSocket on the loop
// builds on; and the same echo servers on net/http's own server, for comparison. The figure is
// beyond an accepted socket of package net: the clients' share and that socket's are taken out
// (rawCost), so a dwell connection, which has no such socket, comes out a little under what it
// holds, and a native hand-over near zero. Each case runs in a process of its own, with the
// runtime's fixed 2 KiB stack start, so that neither the cases before it nor the tests before
// move its figure. The bounds hold under the race detector too, so that make test's run of
// this module (with -race) catches a leak.
func TestIdleFootprint(t *testing.T) {
	if testing.Short() {
		t.Skip("long")
	}
	if portablePoller {
		// There a connection on dwell's loops also holds the poller's reader and writer
		// goroutines and its 16 KiB read buffer (the native case measures some 22 KB there,
		// against its 4 KiB bound), whose stacks vary with the scheduling: the figures would be
		// the poller's, not what a WebSocket costs on the loop, which does not depend on it.
		t.Skip("the portable poller's goroutines and buffer per connection are most of the figure; Linux's epoll build measures it")
	}
	const n = 1000
	bridged := func(h func(testing.TB) http.Handler) func(*testing.T) string {
		return func(t *testing.T) string {
			return serveDwell(t, func(r *router.Router) { r.HandleHTTP("GET", "/ws", h(t)) })
		}
	}
	onNetHTTP := func(h func(testing.TB) http.Handler) func(*testing.T) string {
		return func(t *testing.T) string { return serveNetHTTP(t, h(t)) }
	}
	native := func(t *testing.T) string {
		return serveDwell(t, func(r *router.Router) { r.GET("/ws", handOverHi) })
	}
	cases := []struct {
		name  string
		serve func(t *testing.T) string // the server's address
		bound float64                   // far over the figure: a leak per connection, not a few bytes more, fails it
	}{
		{"gorilla", bridged(gorillaEcho), 64 << 10},
		{"coder", bridged(coderEcho), 64 << 10},
		{"native", native, 4 << 10},
		{"gorilla on net/http", onNetHTTP(gorillaEcho), 64 << 10},
		{"coder on net/http", onNetHTTP(coderEcho), 64 << 10},
	}
	if name := os.Getenv(footprintCase); name != "" {
		for _, c := range cases {
			if c.name != name {
				continue
			}
			raw := rawCost(t, n)
			f := measure(t, c.serve(t), n, false, nil)
			heap, stack := f.heap-raw.heap, f.stack-raw.stack
			note := ""
			if raceEnabled {
				note = " (under the race detector, whose stacks are larger)"
			}
			t.Logf("%s: %.0f B per idle connection (heap %.0f B, stacks %.0f B, %.2f goroutines), %d connections%s",
				c.name, heap+stack, heap, stack, f.goroutines-raw.goroutines, n, note)
			if heap+stack > c.bound {
				t.Errorf("%.0f B per idle connection, over %.0f B", heap+stack, c.bound)
			}
		}
		return
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestIdleFootprint$", "-test.v")
			cmd.Env = append(os.Environ(), footprintCase+"="+c.name,
				"GODEBUG="+strings.TrimPrefix(os.Getenv("GODEBUG")+","+fixedStackStart, ","))
			out, err := cmd.CombinedOutput()
			t.Logf("in a process of its own:\n%s", out)
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}

// serveDwell serves the routes that route adds on a dwell router for the length of the test.
func serveDwell(t *testing.T, route func(r *router.Router)) string {
	r := router.New()
	route(r)
	// No stall detector: on a loaded machine code that waits for a CPU can outlast its
	// threshold, and what the detector then takes to look into it (a goroutine profile, a note
	// with a stack) would count as what the connections hold, there or not with the scheduling.
	_, addr := coretest.Serve(t, r.Handler(), core.Options{StallThreshold: -1})
	return addr
}

// serveNetHTTP serves h with net/http's own server for the length of the test.
func serveNetHTTP(t *testing.T, h http.Handler) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String()
}

// handOverHi answers the upgrade with a 101 and hands the connection over to a protocol that
// answers each masked "hi" frame with its echo, and holds nothing.
func handOverHi(c *core.Ctx) {
	c.SetStatus(101)
	c.SetHeader("Upgrade", "websocket")
	c.SetHeader("Sec-WebSocket-Accept", "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
	if _, err := c.HandOver(hiProtocol{}); err != nil {
		panic(fmt.Sprint("HandOver: ", err))
	}
}

// hiProtocol is handOverHi's protocol: a whole masked "hi" frame in, its echo out.
type hiProtocol struct{}

func (hiProtocol) Receive(c *core.Conn, in []byte) int {
	n := 0
	for ; len(in)-n >= len(maskedHi); n += len(maskedHi) {
		c.Write([]byte(echoedHi))
	}
	return n
}
func (hiProtocol) Drained(*core.Conn)       {}
func (hiProtocol) Timeout(*core.Conn)       {}
func (hiProtocol) Shutdown(c *core.Conn)    { c.Close() }
func (hiProtocol) Closed(*core.Conn, error) {}
