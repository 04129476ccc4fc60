package browser

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/examples/internal/chatroom"
	"github.com/dwellhttp/dwell/wait"
)

// browser is the context of the Chromium that every test opens its pages in; nil when none was
// found, and the reason is in noBrowser.
var (
	browser   context.Context
	noBrowser string
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	path := findChromium()
	if path == "" {
		noBrowser = "no Chromium found: install the Debian package chromium (apt-get install chromium), " +
			"or name the browser in CHROME"
		return m.Run()
	}
	dir, err := os.MkdirTemp("", "dwell-chromium-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	// Headless, as root (no sandbox), and quiet: no request to anywhere but the chat.
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.UserDataDir(dir),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.WindowSize(900, 700),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-domain-reliability", true),
		chromedp.Flag("no-pings", true),
	)
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	ctx, cancel := chromedp.NewContext(alloc)
	defer cancel()
	if err := chromedp.Do(ctx); err != nil {
		fmt.Fprintf(os.Stderr, "starting %s: %v\n", path, err)
		return 1
	}
	browser = ctx
	return m.Run()
}

func findChromium() string {
	if p := os.Getenv("CHROME"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "headless_shell"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// A server runs the chat in this process, on the same address across restarts, and records
// the requests it gets.
type server struct {
	t    *testing.T
	addr string // host:port, once started
	srv  *core.Server

	mu        sync.Mutex
	requests  []string      // "METHOD /path" of every request
	gate      chan struct{} // when not nil, a POST waits until it is closed
	arrived   chan struct{} // a POST is waiting at the gate
	noUpgrade bool          // GET /ws is answered 503, as by a proxy that passes no upgrade
}

// startServer starts the chat on a free loopback port and stops it when the test ends.
func startServer(t *testing.T) *server {
	s := &server{t: t, addr: "127.0.0.1:0", arrived: make(chan struct{}, 16)}
	s.start()
	t.Cleanup(func() {
		if s.srv != nil {
			s.stop()
		}
	})
	return s
}

func (s *server) url() string { return "http://" + s.addr + "/" }

// start serves a new, empty room, as the program does when it starts again.
func (s *server) start() {
	s.t.Helper()
	s.srv = core.NewServer(s.record(chatroom.New().Handler()), core.Options{
		Addr:   s.addr,
		Loops:  2,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err := s.srv.Listen(); err != nil {
		s.t.Fatal(err)
	}
	s.addr = s.srv.Addr().String()
	go s.srv.ListenAndServe()
}

// stop shuts the server down, as SIGTERM does the program.
func (s *server) stop() {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.srv.Shutdown(ctx); err != nil {
		s.t.Errorf("shutdown: %v", err)
	}
	s.srv = nil
}

// record notes every request, holds POSTs at the gate while there is one, and refuses sockets
// while told to.
func (s *server) record(h core.Handler) core.Handler {
	return func(c *core.Ctx) {
		s.mu.Lock()
		s.requests = append(s.requests, c.Method()+" "+c.Path())
		gate, noUpgrade := s.gate, s.noUpgrade
		s.mu.Unlock()
		if noUpgrade && c.Path() == "/ws" {
			c.SetStatus(503)
			c.WriteString("no WebSocket through here\n")
			return
		}
		if gate != nil && c.Method() == "POST" {
			s.arrived <- struct{}{}
			wait.Do(c, func() { <-gate })
		}
		h(c)
	}
}

// hold makes POSTs wait until the function it returns is called, or the test ends: a slow
// link.
func (s *server) hold() (release func()) {
	gate := make(chan struct{})
	s.mu.Lock()
	s.gate = gate
	s.mu.Unlock()
	release = sync.OnceFunc(func() {
		s.mu.Lock()
		s.gate = nil
		s.mu.Unlock()
		close(gate)
	})
	s.t.Cleanup(release)
	return release
}

// refuseSockets makes the server answer the page's sockets (GET /ws) with 503, as a proxy that
// passes no upgrade would, or lets them through again. A socket already open stays.
func (s *server) refuseSockets(refuse bool) {
	s.mu.Lock()
	s.noUpgrade = refuse
	s.mu.Unlock()
}

// count returns how many requests began with prefix ("POST /messages", "GET /favicon.ico").
func (s *server) count(prefix string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, r := range s.requests {
		if strings.HasPrefix(r, prefix) {
			n++
		}
	}
	return n
}
