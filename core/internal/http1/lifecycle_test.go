package http1

import (
	"context"
	"io"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dwellhttp/dwell/core/internal/serve"
)

// TestLoopWaitsForHeldHandler: a handler held on work that must run to its end (as wait.Do's)
// outlives its connection — here reset by the client during a shutdown: the connection closes
// at once, as a reset ends both directions — and the loop stops
// only once the work has woken it, so that neither the wake nor the coroutine is lost.
func TestLoopWaitsForHeldHandler(t *testing.T) {
	type parked struct {
		w    serve.Waker
		l    *serve.Loop
		done <-chan struct{}
	}
	held := make(chan parked, 1)
	woke := make(chan error, 1)
	s := newServer(func(c *serve.Ctx) {
		held <- parked{c.Waker(), c.Seam().Loop(), c.Context().Done()}
		woke <- c.Seam().Hold()
	}, serve.Options{Addr: "127.0.0.1:0", Logger: newTestLogger(&logBuffer{})})
	if err := s.Listen(); err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- s.ListenAndServe() }()
	c := dial(t, s.Addr().String())
	c.Send("GET / HTTP/1.1\r\nHost: h\r\n\r\n")
	p := <-held
	shut := make(chan error, 1)
	go func() { shut <- s.Shutdown(context.Background()) }()
	// The shutdown has begun once the loop no longer accepts.
	for {
		d, err := net.Dial("tcp", s.Addr().String())
		if err != nil {
			break
		}
		d.Close()
		runtime.Gosched()
	}
	c.SetLinger(0)
	c.Close() // the last connection is reset while its handler is held
	<-p.done  // the loop has seen it go
	// A task posted now runs in a later turn of the loop: if the loop stopped when the
	// connection went, it is refused.
	ran := make(chan struct{})
	if err := p.l.Post(func() { close(ran) }); err != nil {
		t.Fatalf("the loop stopped under a held handler: %v", err)
	}
	<-ran
	select {
	case err := <-served:
		t.Fatalf("the server stopped (%v) while a handler was held", err)
	case err := <-woke:
		t.Fatalf("Hold ended (%v) before its wake", err)
	default:
	}
	if !p.w.Wake(nil) {
		t.Fatal("the held handler's loop had stopped: its wake was refused")
	}
	if err := <-woke; err != serve.ErrClosed {
		t.Fatalf("Hold returned %v, want ErrClosed (the client left meanwhile)", err)
	}
	if err := <-served; err != serve.ErrServerClosed {
		t.Fatal(err)
	}
	if err := <-shut; err != nil {
		t.Fatal(err)
	}
}

// TestBytesHeadersAndNoContentType: the borrowed field iterator sees what Headers does, and an
// empty Content-Type sends none.
func TestBytesHeadersAndNoContentType(t *testing.T) {
	_, addr := startServer(t, func(c *serve.Ctx) {
		var b strings.Builder
		for k, v := range c.Bytes().Headers() {
			b.WriteString(string(k) + "=" + string(v) + ";")
		}
		c.SetHeader("Content-Type", "")
		c.Flush()
		c.WriteString(b.String())
	}, serve.Options{})
	c := dial(t, addr)
	c.Send("GET / HTTP/1.1\r\nHost: h\r\nX-A:  1 \r\n\r\n")
	resp, body := c.Response("GET")
	if body != "Host=h;X-A=1;" {
		t.Fatalf("body %q", body)
	}
	if ct, ok := resp.Header["Content-Type"]; ok {
		t.Fatalf("Content-Type %q sent", ct)
	}
}

// TestRemoteAddr: the client's address, asked several times in a request and in the next.
func TestRemoteAddr(t *testing.T) {
	_, addr := startServer(t, func(c *serve.Ctx) {
		a, b := c.RemoteAddr(), c.RemoteAddr()
		if a != b || !a.IsValid() {
			c.SetStatus(500)
		}
		c.WriteString(a.String())
	}, serve.Options{})
	c := dial(t, addr)
	for range 2 {
		c.Send("GET / HTTP/1.1\r\nHost: h\r\n\r\n")
		if resp, body := c.Response("GET"); resp.StatusCode != 200 || body != c.LocalAddr().String() {
			t.Fatalf("%d %q, want %s", resp.StatusCode, body, c.LocalAddr())
		}
	}
}

// TestDeadlineCutsAStartedResponse: a response that started before the request's deadline and
// was not done by it reaches the client cut — no final chunk — even when its handler returns
// as if nothing happened; its writes after the deadline fail.
func TestDeadlineCutsAStartedResponse(t *testing.T) {
	errs := make(chan error, 2)
	_, addr := startServer(t, func(c *serve.Ctx) {
		c.SetTimeout(20 * time.Millisecond)
		c.WriteString("partial")
		c.Flush()
		errs <- c.Suspend(0)
		_, err := c.WriteString("late")
		errs <- err
	}, serve.Options{})
	c := dial(t, addr)
	c.Send("GET / HTTP/1.1\r\nHost: h\r\n\r\n")
	raw, _ := io.ReadAll(c.R)
	if !strings.Contains(string(raw), "7\r\npartial\r\n") || strings.HasSuffix(string(raw), "0\r\n\r\n") ||
		strings.Contains(string(raw), "late") {
		t.Fatalf("response %q", raw)
	}
	if err := <-errs; err != serve.ErrDeadline {
		t.Fatalf("the wait ended with %v", err)
	}
	if err := <-errs; err != serve.ErrDeadline {
		t.Fatalf("a write after the deadline: %v", err)
	}
}

// countingFilter passes everything on and counts the bytes given to its Write.
type countingFilter struct {
	next        serve.BodyWriter
	transparent bool
	written     atomic.Int64
}

func (f *countingFilter) Write(p []byte) (int, error) {
	f.written.Add(int64(len(p)))
	return f.next.Write(p)
}
func (f *countingFilter) Flush() error      { return f.next.Flush() }
func (f *countingFilter) Close() error      { return f.next.Close() }
func (f *countingFilter) Transparent() bool { return f.transparent }

// TestSendFileAroundATransparentFilter: SendFile reads a file through a filter that changes the
// body, and goes around one that says it does not.
func TestSendFileAroundATransparentFilter(t *testing.T) {
	name := filepath.Join(t.TempDir(), "f")
	content := strings.Repeat("0123456789", 10<<10)
	if err := os.WriteFile(name, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	filters := make(chan *countingFilter, 1)
	_, addr := startServer(t, func(c *serve.Ctx) {
		f := &countingFilter{transparent: c.Path() == "/transparent"}
		c.Seam().WrapBody(func(next serve.BodyWriter) serve.BodyWriter { f.next = next; return f })
		file, _ := os.Open(name)
		defer file.Close()
		c.SetHeader("Content-Length", strconv.Itoa(len(content)))
		c.SendFile(file, 0, int64(len(content)))
		filters <- f
	}, serve.Options{})
	for _, tc := range []struct {
		path    string
		through int64
	}{{"/transparent", 0}, {"/filtering", int64(len(content))}} {
		c := dial(t, addr)
		c.Send("GET " + tc.path + " HTTP/1.1\r\nHost: h\r\n\r\n")
		if _, body := c.Response("GET"); body != content {
			t.Fatalf("%s: %d bytes", tc.path, len(body))
		}
		if f := <-filters; f.written.Load() != tc.through {
			t.Fatalf("%s: %d bytes through the filter, want %d", tc.path, f.written.Load(), tc.through)
		}
	}
}

// TestHeaderValues: every value of a field, in order, whatever the case of its name.
func TestHeaderValues(t *testing.T) {
	_, addr := startServer(t, func(c *serve.Ctx) {
		var tags []string
		for v := range c.Bytes().HeaderValues("x-tag") {
			tags = append(tags, string(v))
		}
		none := 0
		for range c.Bytes().HeaderValues("X-None") {
			none++
		}
		c.WriteString(strings.Join(tags, "|") + "/" + strconv.Itoa(none))
	}, serve.Options{})
	c := dial(t, addr)
	c.Send("GET / HTTP/1.1\r\nHost: h\r\nX-Tag: a, b\r\nX-Other: z\r\nx-tag: c\r\n\r\n")
	if _, body := c.Response("GET"); body != "a, b|c/0" {
		t.Fatalf("body %q", body)
	}
}
