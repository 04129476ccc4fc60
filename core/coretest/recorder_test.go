package coretest_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/core/coretest"
	"github.com/dwellhttp/dwell/wait"
)

// body returns the body of a complete response.
func body(t *testing.T, resp *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("body: %v", err)
	}
	return string(b)
}

// newLogger returns a logger that writes to b.
func newLogger(b *coretest.LogBuffer) *slog.Logger { return slog.New(slog.NewTextHandler(b, nil)) }

// TestDo: status, header fields and body, as a client reads them.
func TestDo(t *testing.T) {
	h := func(c *core.Ctx) {
		c.SetHeader("Content-Type", "text/plain")
		c.SetHeader("X-Path", c.Path())
		c.SetStatus(http.StatusCreated)
		c.WriteString("hello, " + c.Query("name"))
	}
	resp := coretest.Do(t, h, coretest.NewRequest("GET", "/greet?name=dwell", nil))
	if resp.StatusCode != 201 || resp.Header.Get("Content-Type") != "text/plain" ||
		resp.Header.Get("X-Path") != "/greet" || resp.ContentLength != 12 {
		t.Fatalf("response %d %v (length %d)", resp.StatusCode, resp.Header, resp.ContentLength)
	}
	if got := body(t, resp); got != "hello, dwell" {
		t.Fatalf("body %q", got)
	}
	if resp.Request == nil || resp.Request.URL.Path != "/greet" {
		t.Fatalf("resp.Request %v", resp.Request)
	}
}

// TestRequestAsBuilt: the handler sees the request as the test built it — its Host, its
// header fields, no User-Agent it did not set — and an absolute target's host.
func TestRequestAsBuilt(t *testing.T) {
	h := func(c *core.Ctx) {
		var fields []string
		for name, value := range c.Headers() {
			fields = append(fields, name+"="+value)
		}
		fmt.Fprintf(c, "%s %s %s %s", c.Method(), c.Target(), c.Host(), strings.Join(fields, ","))
	}
	cl := coretest.NewClient(t, h, core.Options{})
	r := coretest.NewRequest("DELETE", "/items/7?soft=1", nil)
	r.Header.Set("X-Token", "abc")
	if got := body(t, cl.Do(r)); got != "DELETE /items/7?soft=1 example.com Host=example.com,X-Token=abc" {
		t.Fatalf("handler saw %q", got)
	}
	r = coretest.NewRequest("GET", "http://api.example/v1", nil)
	r.Header.Set("User-Agent", "tester")
	if got := body(t, cl.Do(r)); got != "GET /v1 api.example Host=api.example,User-Agent=tester" {
		t.Fatalf("handler saw %q", got)
	}
}

// echo answers with what it read of the body and how it came.
func echo(c *core.Ctx) {
	var b []byte
	buf := make([]byte, 5) // several reads
	for {
		n, err := c.ReadBody(buf)
		b = append(b, buf[:n]...)
		if err == io.EOF {
			break
		}
		if err != nil {
			return // the server answers for the body (a 413, a 400)
		}
	}
	fmt.Fprintf(c, "%d %v %s", c.ContentLength(), c.Seam().Chunked(), b)
}

// TestPostBody: a body read by the handler, with a Content-Length, or chunked when the test's
// reader has no known length.
func TestPostBody(t *testing.T) {
	cl := coretest.NewClient(t, echo, core.Options{})
	r := coretest.NewRequest("POST", "/", strings.NewReader("name=dwell&lang=go"))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if got := body(t, cl.Do(r)); got != "18 false name=dwell&lang=go" {
		t.Fatalf("Content-Length body: %q", got)
	}
	r = coretest.NewRequest("PUT", "/", io.MultiReader(strings.NewReader("part one, "), strings.NewReader("part two")))
	if got := body(t, cl.Do(r)); got != "-1 true part one, part two" {
		t.Fatalf("chunked body: %q", got)
	}
	// A body larger than the sockets hold, which the handler reads as it comes.
	big := strings.Repeat("0123456789abcdef", 1<<16) // 1 MiB
	if got := body(t, cl.Do(coretest.NewRequest("POST", "/", strings.NewReader(big)))); got != "1048576 false "+big {
		t.Fatalf("large body: %d bytes back", len(got))
	}
}

// TestSuspendWaker: WaitParked returns once the handler is in Suspend; the Waker then
// completes the response.
func TestSuspendWaker(t *testing.T) {
	wakers := make(chan core.Waker, 1)
	h := func(c *core.Ctx) {
		wakers <- c.Waker()
		err := c.Suspend(0)
		fmt.Fprintf(c, "woken: %v", err)
	}
	cl := coretest.NewClient(t, h, core.Options{})
	x := cl.Start(coretest.NewRequest("GET", "/wait", nil))
	w := coretest.Receive(t, "the handler's Waker", wakers)
	x.WaitParked()
	if st := cl.Server().Stats().Total.Conns; st.Parked != 1 {
		t.Fatalf("after WaitParked, Stats: %+v", st)
	}
	w.Wake(errors.New("by the test"))
	if got := body(t, x.Response()); got != "woken: by the test" {
		t.Fatalf("body %q", got)
	}
}

// TestWaitParkedTwice: WaitParked of one exchange waits for its own handler, whatever the
// others' do; a handler parked twice is seen each time.
func TestWaitParkedTwice(t *testing.T) {
	var ev wait.Event
	h := func(c *core.Ctx) {
		for i := range 2 {
			if err := ev.Wait(c, 0); err != nil {
				fmt.Fprintf(c, "wait %d: %v", i, err)
				return
			}
		}
		c.WriteString("fired twice")
	}
	cl := coretest.NewClient(t, h, core.Options{})
	a := cl.Start(coretest.NewRequest("GET", "/a", nil))
	b := cl.Start(coretest.NewRequest("GET", "/b", nil))
	a.WaitParked()
	b.WaitParked()
	ev.Fire()
	a.WaitParked() // parked again, in its second wait
	b.WaitParked()
	ev.Fire()
	for _, x := range []*coretest.Exchange{a, b} {
		if got := body(t, x.Response()); got != "fired twice" {
			t.Fatalf("body %q", got)
		}
	}
}

// TestSleep: a handler that sleeps is answered once its sleep is over; one that sleeps long
// parks, and a shutdown (the test's own) ends its sleep.
func TestSleep(t *testing.T) {
	h := func(c *core.Ctx) {
		c.Seam().WakeOnShutdown()
		d, _ := time.ParseDuration(c.Query("d"))
		err := wait.Sleep(c, d)
		fmt.Fprintf(c, "slept: %v", err)
	}
	if got := body(t, coretest.Do(t, h, coretest.NewRequest("GET", "/?d=1ms", nil))); got != "slept: <nil>" {
		t.Fatalf("short sleep: %q", got)
	}

	cl := coretest.NewClient(t, h, core.Options{})
	x := cl.Start(coretest.NewRequest("GET", "/?d=1h", nil))
	x.WaitParked()
	done := make(chan error, 1)
	go func() { done <- cl.Server().Shutdown(context.Background()) }()
	resp := x.Response()
	if got := body(t, resp); got != "slept: "+core.ErrShutdown.Error() || !resp.Close {
		t.Fatalf("body %q (close %v)", got, resp.Close)
	}
	if err := coretest.Receive(t, "the shutdown", done); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
}

// TestDetach: WaitParked returns for a continuation pending after Detach; waking it completes
// the response.
func TestDetach(t *testing.T) {
	wakers := make(chan core.Waker, 1)
	h := func(c *core.Ctx) {
		c.SetHeader("X-Handler", "returned")
		wakers <- c.Waker()
		c.Detach(0, func(c *core.Ctx, err error) {
			fmt.Fprintf(c, "continued: %v", err)
		})
	}
	cl := coretest.NewClient(t, h, core.Options{})
	x := cl.Start(coretest.NewRequest("GET", "/", nil))
	w := coretest.Receive(t, "the Waker", wakers)
	x.WaitParked()
	if st := cl.Server().Stats().Total.Conns; st.Detached != 1 {
		t.Fatalf("after WaitParked, Stats: %+v", st)
	}
	w.Wake(nil)
	resp := x.Response()
	if got := body(t, resp); got != "continued: <nil>" || resp.Header.Get("X-Handler") != "returned" {
		t.Fatalf("response %v %q", resp.Header, got)
	}
}

// TestWaitDo: a handler holding for blocking work (wait.Do) counts as parked.
func TestWaitDo(t *testing.T) {
	release := make(chan struct{})
	h := func(c *core.Ctx) {
		var v string
		if err := wait.Do(c, func() { <-release; v = "done" }); err != nil {
			v = err.Error()
		}
		c.WriteString(v)
	}
	cl := coretest.NewClient(t, h, core.Options{})
	x := cl.Start(coretest.NewRequest("GET", "/", nil))
	x.WaitParked()
	close(release)
	if got := body(t, x.Response()); got != "done" {
		t.Fatalf("body %q", got)
	}
}

// TestStream: an event stream read as it comes, the handler parked between events.
func TestStream(t *testing.T) {
	topic := wait.NewTopic[string](16)
	h := func(c *core.Ctx) {
		c.SetHeader("Content-Type", "text/event-stream")
		c.WriteString(": hello\n\n")
		c.Flush()
		var last uint64
		for {
			msgs, l, err := topic.Next(c, last, 0)
			if err != nil {
				return
			}
			last = l
			for _, m := range msgs {
				fmt.Fprintf(c, "data: %s\n\n", m)
			}
			if err := c.Flush(); err != nil {
				return
			}
		}
	}
	cl := coretest.NewClient(t, h, core.Options{})
	x := cl.Start(coretest.NewRequest("GET", "/events", nil))
	resp := x.Stream()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" ||
		resp.TransferEncoding[0] != "chunked" {
		t.Fatalf("head %d %v %v", resp.StatusCode, resp.Header, resp.TransferEncoding)
	}
	events := bufio.NewReader(resp.Body)
	event := func() string {
		t.Helper()
		var e string
		for {
			line, err := events.ReadString('\n')
			if err != nil {
				t.Fatalf("reading the stream: %v", err)
			}
			if line == "\n" {
				return e
			}
			e += line
		}
	}
	if e := event(); e != ": hello\n" {
		t.Fatalf("first event %q", e)
	}
	for _, m := range []string{"one", "two"} {
		x.WaitParked()
		topic.Publish(m)
		if e := event(); e != "data: "+m+"\n" {
			t.Fatalf("event %q, want %s", e, m)
		}
	}
	x.WaitParked()
	x.Close() // the client leaves: the handler's Next ends with ErrClosed
	coretest.WaitFor(t, "the connection to close", func() bool {
		return cl.Server().Stats().Total.Conns.Open == 0
	})
}

// TestClose: a client that leaves ends the handler's wait with ErrClosed.
func TestClose(t *testing.T) {
	errs := make(chan error, 1)
	h := func(c *core.Ctx) { errs <- c.Suspend(0) }
	cl := coretest.NewClient(t, h, core.Options{})
	x := cl.Start(coretest.NewRequest("GET", "/", nil))
	x.WaitParked()
	x.Close()
	if err := coretest.Receive(t, "the handler's Suspend", errs); err != core.ErrClosed {
		t.Fatalf("Suspend returned %v", err)
	}
}

// TestServerAnswers: the server's own answers reach the test as sent: a 413 for a body over
// MaxBodyBytes, a 500 for a panic.
func TestServerAnswers(t *testing.T) {
	cl := coretest.NewClient(t, echo, core.Options{MaxBodyBytes: 10})
	resp := cl.Do(coretest.NewRequest("POST", "/", strings.NewReader(strings.Repeat("x", 1<<20))))
	if resp.StatusCode != http.StatusRequestEntityTooLarge || !resp.Close {
		t.Fatalf("over MaxBodyBytes: %d (close %v)", resp.StatusCode, resp.Close)
	}
	body(t, resp)
	if got := body(t, cl.Do(coretest.NewRequest("POST", "/", strings.NewReader("short")))); got != "5 false short" {
		t.Fatalf("under MaxBodyBytes: %q", got)
	}

	var log coretest.LogBuffer
	panicky := func(c *core.Ctx) {
		c.WriteString("lost")
		panic("handler bug")
	}
	cl = coretest.NewClient(t, panicky, core.Options{Logger: newLogger(&log)})
	resp = cl.Do(coretest.NewRequest("GET", "/", nil))
	if got := body(t, resp); resp.StatusCode != http.StatusInternalServerError || !resp.Close ||
		got != "500 Internal Server Error: the handler failed\n" {
		t.Fatalf("panic: %d (close %v) %q", resp.StatusCode, resp.Close, got)
	}
	if !strings.Contains(log.String(), "handler bug") {
		t.Fatalf("the panic is not logged: %s", log.String())
	}
	if p := cl.Server().Stats().Total.Panics; p != 1 {
		t.Fatalf("Stats: %d panics", p)
	}
}

// TestCutShort: a response the server cuts short reads as far as it came, then fails.
func TestCutShort(t *testing.T) {
	h := func(c *core.Ctx) {
		c.SetHeader("Content-Length", "100")
		c.WriteString("only this")
		c.Flush()
		panic(core.ErrAbortHandler)
	}
	resp := coretest.Do(t, h, coretest.NewRequest("GET", "/", nil))
	b, err := io.ReadAll(resp.Body)
	if string(b) != "only this" || err != io.ErrUnexpectedEOF {
		t.Fatalf("body %q, %v", b, err)
	}
}

// TestHead: a HEAD response has the head of the GET's, and no body.
func TestHead(t *testing.T) {
	h := func(c *core.Ctx) {
		c.SetHeader("Content-Type", "text/plain")
		c.WriteString("twelve bytes")
	}
	cl := coretest.NewClient(t, h, core.Options{})
	resp := cl.Do(coretest.NewRequest("HEAD", "/", nil))
	if resp.StatusCode != 200 || resp.ContentLength != 12 || resp.Header.Get("Content-Type") != "text/plain" {
		t.Fatalf("HEAD: %d %d %v", resp.StatusCode, resp.ContentLength, resp.Header)
	}
	if got := body(t, resp); got != "" {
		t.Fatalf("HEAD body %q", got)
	}
	if got := body(t, cl.Do(coretest.NewRequest("GET", "/", nil))); got != "twelve bytes" {
		t.Fatalf("GET body %q", got)
	}
}

// TestRemoteAddr: the handler sees the request's RemoteAddr: httptest's by default.
func TestRemoteAddr(t *testing.T) {
	h := func(c *core.Ctx) { c.WriteString(c.RemoteAddr().String()) }
	cl := coretest.NewClient(t, h, core.Options{})
	for _, addr := range []string{"", "198.51.100.7:4321", "[2001:db8::1]:443"} {
		r := coretest.NewRequest("GET", "/", nil)
		want := addr
		if addr == "" {
			r.RemoteAddr, want = "", coretest.DefaultRemoteAddr
		} else {
			r.RemoteAddr = addr
		}
		if got := body(t, cl.Do(r)); got != want {
			t.Fatalf("RemoteAddr %q: the handler saw %q", addr, got)
		}
	}
	if got := body(t, cl.Do(coretest.NewRequest("GET", "/", nil))); got != "192.0.2.1:1234" {
		t.Fatalf("NewRequest's RemoteAddr: the handler saw %q", got)
	}
}

// TestInterim: a 103 Early Hints comes before the response, kept by Interim.
func TestInterim(t *testing.T) {
	h := func(c *core.Ctx) {
		c.SetHeader("Link", "</style.css>; rel=preload")
		c.SetStatus(http.StatusEarlyHints)
		c.SetStatus(http.StatusOK)
		c.WriteString("page")
	}
	cl := coretest.NewClient(t, h, core.Options{})
	x := cl.Start(coretest.NewRequest("GET", "/", nil))
	resp := x.Response()
	in := x.Interim()
	if resp.StatusCode != 200 || body(t, resp) != "page" || len(in) != 1 || in[0].StatusCode != 103 ||
		in[0].Header.Get("Link") != "</style.css>; rel=preload" {
		t.Fatalf("response %d, interim %v", resp.StatusCode, in)
	}
}

// TestSendFile: a file sent by the server (sendfile(2) on Linux) reaches the client whole.
func TestSendFile(t *testing.T) {
	content := strings.Repeat("file content ", 50000)
	name := t.TempDir() + "/f"
	if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	h := func(c *core.Ctx) {
		f, err := os.Open(name)
		if err != nil {
			c.SetStatus(500)
			return
		}
		defer f.Close()
		c.SetHeader("Content-Length", fmt.Sprint(len(content)))
		if err := c.SendFile(f, 0, int64(len(content))); err != nil {
			panic(err)
		}
	}
	if got := body(t, coretest.Do(t, h, coretest.NewRequest("GET", "/", nil))); got != content {
		t.Fatalf("%d bytes, want %d", len(got), len(content))
	}
}

// TestManyExchanges: a Client serves many requests, one after another and at once.
func TestManyExchanges(t *testing.T) {
	h := func(c *core.Ctx) { c.WriteString(c.Query("i")) }
	cl := coretest.NewClient(t, h, core.Options{Loops: 2})
	for i := range 200 {
		if got := body(t, cl.Do(coretest.NewRequest("GET", fmt.Sprintf("/?i=%d", i), nil))); got != fmt.Sprint(i) {
			t.Fatalf("request %d: %q", i, got)
		}
	}
	xs := make([]*coretest.Exchange, 20)
	for i := range xs {
		xs[i] = cl.Start(coretest.NewRequest("GET", fmt.Sprintf("/?i=%d", i), nil))
	}
	for i := len(xs) - 1; i >= 0; i-- { // the last first: they are answered whatever the order
		if got := body(t, xs[i].Response()); got != fmt.Sprint(i) {
			t.Fatalf("exchange %d: %q", i, got)
		}
	}
}

// TestCleanupEndsParked: exchanges left parked when the test ends are closed, and the server
// shuts down: run as a subtest, whose cleanup must return.
func TestCleanupEndsParked(t *testing.T) {
	errs := make(chan error, 2)
	t.Run("parked", func(t *testing.T) {
		h := func(c *core.Ctx) {
			errs <- c.Suspend(0)
		}
		cl := coretest.NewClient(t, h, core.Options{})
		cl.Start(coretest.NewRequest("GET", "/", nil)).WaitParked()
		cl.Start(coretest.NewRequest("GET", "/", nil)).WaitParked()
	})
	for range 2 {
		if err := coretest.Receive(t, "a Suspend", errs); err != core.ErrClosed {
			t.Fatalf("Suspend returned %v", err)
		}
	}
}
