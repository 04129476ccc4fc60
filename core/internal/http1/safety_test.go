package http1

import (
	"context"
	"errors"
	"io"
	"os"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dwellhttp/dwell/core/internal/serve"
)

// TestDetachedResponseOwnsItsHeaders: a handler sets a response header from the request's own
// bytes, unconverted (as code that makes a string of a borrowed slice would), then detaches;
// while it waits, other clients send requests of the same size, which reuse the arena. Their
// bytes must never appear in the first response, and their CR LF must never split it.
func TestDetachedResponseOwnsItsHeaders(t *testing.T) {
	_, addr := startServer(t, func(c *serve.Ctx) {
		if c.Path() == "/wait" {
			b, _ := c.Bytes().Header("Origin")
			origin := serve.BorrowString(b) // borrowed on purpose
			c.SetHeader("Access-Control-Allow-Origin", origin)
			c.Seam().DetachFor(100*time.Millisecond, func(c *serve.Ctx, err error) { c.WriteString("late") })
			return
		}
		c.WriteString("now")
	}, serve.Options{})
	for n := range 20 {
		origin := "https://" + strings.Repeat("a", 20+n) + ".example"
		// The same length, with a field line where the origin was.
		evil := "x\r\nSet-Cookie: sess=EVIL" + strings.Repeat("z", len(origin)-len("x\r\nSet-Cookie: sess=EVIL"))
		if len(evil) != len(origin) {
			evil = evil[:len(origin)]
		}
		a := dial(t, addr)
		a.Send("GET /wait HTTP/1.1\r\nHost: h\r\nOrigin: " + origin + "\r\n\r\n")
		for range 3 {
			b := dial(t, addr)
			// Bytes the parser refuses still go through the arena up to the refusal; valid
			// ones are served.
			b.Send("GET /wait HTTP/1.1\r\nHost: h\r\nOrigin: " + evil + "\r\n\r\n")
			c := dial(t, addr)
			c.Send("GET /zzzz HTTP/1.1\r\nHost: h\r\nOrigin: " + strings.Repeat("Q", len(origin)) + "\r\n\r\n")
			c.Response("GET")
		}
		resp, body := a.Response("GET")
		if got := resp.Header.Get("Access-Control-Allow-Origin"); got != origin || body != "late" {
			t.Fatalf("length %d: Access-Control-Allow-Origin %q, body %q; want %q, late", len(origin), got, body, origin)
		}
		if resp.Header.Get("Set-Cookie") != "" {
			t.Fatalf("length %d: another request's Set-Cookie reached the response", len(origin))
		}
	}
}

// TestAccessorsReturnOwnedStrings: strings a Ctx hands out stay as they were after the request
// is over and its memory has served other requests.
func TestAccessorsReturnOwnedStrings(t *testing.T) {
	type kept struct{ path, query, header, target, method string }
	got := make(chan kept, 2)
	_, addr := startServer(t, func(c *serve.Ctx) {
		got <- kept{c.Path(), c.Query("q"), c.Header("X-Name"), c.Target(), c.Method()}
		c.WriteString("ok")
	}, serve.Options{})
	c := dial(t, addr)
	c.Send("PROPFIND /bob?q=first%20one HTTP/1.1\r\nHost: h\r\nX-Name: bob\r\n\r\n")
	c.Response("GET")
	first := <-got
	c.Send("PROPFIND /eve?q=other%20two HTTP/1.1\r\nHost: h\r\nX-Name: eve\r\n\r\n")
	c.Response("GET")
	<-got
	want := kept{"/bob", "first one", "bob", "/bob?q=first%20one", "PROPFIND"}
	if first != want {
		t.Fatalf("kept %+v after a second request, want %+v", first, want)
	}
}

// TestPanicAfterFlushCutsTheResponse: a response that started cannot be finished by a 500, so
// a panic must leave the client without the final chunk — never with a body that looks whole.
// The same for ErrAbortHandler, which logs nothing, and for a panicking continuation.
func TestPanicAfterFlushCutsTheResponse(t *testing.T) {
	var logs logBuffer
	_, addr := startServer(t, func(c *serve.Ctx) {
		c.WriteString("partial")
		c.Flush()
		switch c.Path() {
		case "/panic":
			panic("boom")
		case "/abort":
			panic(serve.ErrAbortHandler)
		case "/continuation":
			c.Seam().DetachFor(time.Millisecond, func(c *serve.Ctx, err error) {
				c.WriteString("more")
				panic("boom in continuation")
			})
		}
	}, serve.Options{Logger: newTestLogger(&logs)})
	for _, path := range []string{"/panic", "/abort", "/continuation"} {
		t.Run(path, func(t *testing.T) {
			c := dial(t, addr)
			c.Send("GET " + path + " HTTP/1.1\r\nHost: h\r\n\r\n")
			raw, err := io.ReadAll(c.R)
			if err != nil {
				t.Fatal(err)
			}
			s := string(raw)
			if !strings.Contains(s, "7\r\npartial\r\n") {
				t.Fatalf("response %q lacks the flushed chunk", s)
			}
			if strings.HasSuffix(s, "0\r\n\r\n") {
				t.Fatalf("response %q ends with the last chunk: the client takes it as complete", s)
			}
		})
	}
	if n := strings.Count(logs.String(), "panic in handler"); n != 2 {
		t.Fatalf("%d panics logged, want 2 (ErrAbortHandler logs none):\n%s", n, logs.String())
	}
}

// TestAbortBeforeStart: ErrAbortHandler before anything was sent closes the connection
// without a response, after the responses to earlier pipelined requests.
func TestAbortBeforeStart(t *testing.T) {
	_, addr := startServer(t, func(c *serve.Ctx) {
		if c.Path() == "/abort" {
			c.WriteString("never sent")
			panic(serve.ErrAbortHandler)
		}
		c.WriteString("ok")
	}, serve.Options{})
	c := dial(t, addr)
	c.Send("GET /a HTTP/1.1\r\nHost: h\r\n\r\nGET /abort HTTP/1.1\r\nHost: h\r\n\r\n")
	if _, body := c.Response("GET"); body != "ok" {
		t.Fatalf("first response %q", body)
	}
	c.ExpectEOF()
}

// TestAbortCloseDelimitedResets: an HTTP/1.0 body ends with the close, so a cut one can only
// be told from a whole one by a reset.
func TestAbortCloseDelimitedResets(t *testing.T) {
	_, addr := startServer(t, func(c *serve.Ctx) {
		c.WriteString("partial")
		c.Flush()
		panic(serve.ErrAbortHandler)
	}, serve.Options{})
	c := dial(t, addr)
	c.Send("GET / HTTP/1.0\r\n\r\n")
	_, err := io.ReadAll(c.R)
	if !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("read ended with %v, want a connection reset", err)
	}
}

// TestPanickingTimerKeepsServing: a panic in an AfterFunc callback is logged, and the loop goes
// on serving.
func TestPanickingTimerKeepsServing(t *testing.T) {
	var logs logBuffer
	fired := make(chan struct{})
	_, addr := startServer(t, func(c *serve.Ctx) {
		if c.Path() == "/arm" {
			c.Seam().Loop().AfterFunc(0, func() {
				defer close(fired)
				panic("boom in timer")
			})
		}
		c.WriteString("ok")
	}, serve.Options{Logger: newTestLogger(&logs), Loops: 1}) // the second request on the panicked loop
	c := dial(t, addr)
	c.Send("GET /arm HTTP/1.1\r\nHost: h\r\n\r\n")
	c.Response("GET")
	<-fired
	d := dial(t, addr)
	d.Send("GET /after HTTP/1.1\r\nHost: h\r\n\r\n")
	if _, body := d.Response("GET"); body != "ok" {
		t.Fatalf("after the panic: %q", body)
	}
	if !strings.Contains(logs.String(), "boom in timer") {
		t.Fatalf("panic not logged:\n%s", logs.String())
	}
}

// TestGoexitInHandler: runtime.Goexit ends the handler's request (500, or a cut response), not
// the loop: its other connections, and new ones, go on.
func TestGoexitInHandler(t *testing.T) {
	_, addr := startServer(t, func(c *serve.Ctx) {
		switch c.Path() {
		case "/goexit":
			runtime.Goexit()
		case "/goexit-streaming":
			c.WriteString("partial")
			c.Flush()
			runtime.Goexit()
		case "/goexit-continuation":
			c.Seam().DetachFor(time.Millisecond, func(c *serve.Ctx, err error) { runtime.Goexit() })
			return
		}
		c.WriteString("ok")
	}, serve.Options{})
	idle := dial(t, addr) // a connection of the same loop, open across the Goexits
	for _, path := range []string{"/goexit", "/goexit-continuation"} {
		c := dial(t, addr)
		c.Send("GET " + path + " HTTP/1.1\r\nHost: h\r\n\r\n")
		if resp, _ := c.Response("GET"); resp.StatusCode != 500 {
			t.Fatalf("%s: status %d, want 500", path, resp.StatusCode)
		}
	}
	c := dial(t, addr)
	c.Send("GET /goexit-streaming HTTP/1.1\r\nHost: h\r\n\r\n")
	if raw, _ := io.ReadAll(c.R); strings.HasSuffix(string(raw), "0\r\n\r\n") {
		t.Fatalf("a handler that exited mid-stream sent a complete body: %q", raw)
	}
	idle.Send("GET / HTTP/1.1\r\nHost: h\r\n\r\n")
	if _, body := idle.Response("GET"); body != "ok" {
		t.Fatalf("other connection: %q", body)
	}
}

// TestPostAfterRequestEnded: the loop of a finished request can still be posted to, from any
// goroutine.
func TestPostAfterRequestEnded(t *testing.T) {
	ran := make(chan struct{})
	keep := make(chan *serve.Ctx, 1)
	_, addr := startServer(t, func(c *serve.Ctx) {
		keep <- c
		c.WriteString("ok")
	}, serve.Options{})
	c := dial(t, addr)
	c.Send("GET / HTTP/1.1\r\nHost: h\r\n\r\n")
	c.Response("GET")
	cx := <-keep
	if err := cx.Seam().Loop().Post(func() { close(ran) }); err != nil {
		t.Fatal(err)
	}
	<-ran
}

// TestLoopStartFailureReleasesEverything: when a loop cannot start, the loops made before it
// leave no descriptor open, the error comes back, and Shutdown returns.
func TestLoopStartFailureReleasesEverything(t *testing.T) {
	before := openFds(t)
	serve.TestHookNewLoop = func(id int) error {
		if id == 2 {
			return errors.New("no third loop")
		}
		return nil
	}
	defer func() { serve.TestHookNewLoop = nil }()
	s := newServer(helloHandler, serve.Options{Addr: "127.0.0.1:0", Loops: 3, Logger: newTestLogger(io.Discard)})
	if err := s.ListenAndServe(); err == nil || err.Error() != "no third loop" {
		t.Fatalf("ListenAndServe: %v", err)
	}
	if err := s.Shutdown(context.Background()); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if after := openFds(t); after != before {
		t.Fatalf("%d descriptors open before, %d after", before, after)
	}
}

// TestShutdownReturnsWhenItsContextEnds: Shutdown adds no grace of its own after ctx ends.
func TestShutdownReturnsWhenItsContextEnds(t *testing.T) {
	release := make(chan struct{})
	held := make(chan struct{})
	s, addr := startServer(t, func(c *serve.Ctx) {
		w := c.Waker()
		go func() {
			close(held)
			<-release
			w.Wake(nil)
		}()
		c.Seam().Hold() // ends only when the test releases it
		c.WriteString("done")
	}, serve.Options{})
	c := dial(t, addr)
	c.Send("GET / HTTP/1.1\r\nHost: h\r\n\r\n")
	<-held
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := s.Shutdown(ctx); err == nil {
		t.Fatal("Shutdown returned nil while a handler was still running")
	}
	close(release) // only now can the handler end: Shutdown did not wait for it
	c.Response("GET")
}

// openFds counts the process's open descriptors.
func openFds(t *testing.T) int {
	t.Helper()
	runtime.GC() // closes what finalizers would close
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd")
	}
	return len(ents)
}
