package http1

import (
	"bufio"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"testing"

	"github.com/dwellhttp/dwell/core/internal/serve"
	"github.com/dwellhttp/dwell/core/internal/servetest"
	"github.com/dwellhttp/dwell/internal/testclient"
)

// startServer serves h on a free loopback port for the duration of the test.
func startServer(t testing.TB, h serve.Handler, o serve.Options) (*serve.Server, string) {
	t.Helper()
	return startServerMux(t, h, o, nil)
}

// newServer is serve.NewServer with HTTP/1.1 as the server's First: a server of this
// package's alone, without the HTTP/2 that core gives every one.
func newServer(h serve.Handler, o serve.Options) *serve.Server {
	s := serve.NewServer(h, o)
	s.SetFirst(New())
	return s
}

// startServerMux is startServer with mux as the server's Multiplexer.
func startServerMux(t testing.TB, h serve.Handler, o serve.Options, mux serve.Multiplexer) (*serve.Server, string) {
	t.Helper()
	return servetest.Start(t, h, o, New(), mux)
}

// The client side of these tests is internal/testclient's, which coretest exports to the
// other packages (they cannot import coretest here: it imports core).
type (
	rawConn   = testclient.Conn
	logBuffer = testclient.LogBuffer
)

const patience = testclient.Patience

func dial(t testing.TB, addr string) *rawConn {
	t.Helper()
	return testclient.Dial(t, addr)
}

func receive[T any](t testing.TB, what string, ch <-chan T) T {
	t.Helper()
	return testclient.Receive(t, what, ch)
}

func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	testclient.WaitFor(t, what, cond)
}

func helloHandler(c *serve.Ctx) {
	c.SetHeader("Content-Type", "text/plain")
	c.WriteString("Hello World")
}

func newTestLogger(w io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// readResp reads one GET response and returns its body, or the error that stopped the read.
func readResp(c *rawConn) (string, error) {
	resp, err := http.ReadResponse(c.R, &http.Request{Method: "GET"})
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

func newReader(c net.Conn) *bufio.Reader { return bufio.NewReader(c) }

// openConns counts the connections the server's loops hold, asking each loop.
func openConns(s *serve.Server) int {
	s.Mu.Lock()
	loops := s.Loops
	s.Mu.Unlock()
	total := 0
	for _, l := range loops {
		n := make(chan int, 1)
		l.Post(func() { n <- l.NConns })
		total += <-n
	}
	return total
}

// startChild starts this test binary again, to run only the test named test with env (NAME=value)
// added to its environment, and returns the process, its standard input and its standard
// output; its standard error goes to stderr (when not nil), complete once Wait has returned.
func startChild(t testing.TB, test, env string, stderr io.Writer) (*exec.Cmd, io.WriteCloser, io.ReadCloser) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+test+"$")
	cmd.Env = append(os.Environ(), env)
	cmd.Stderr = stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, in, out
}
