package http1

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dwellhttp/dwell/core/internal/serve"
)

type ctxKey string

// TestValues: SetValue is seen by Value and by the request's Context, also from another
// goroutine, and the Context keeps them after the request.
func TestValues(t *testing.T) {
	kept := make(chan context.Context, 1)
	_, addr := startServer(t, func(c *serve.Ctx) {
		c.SetValue(ctxKey("user"), "alice")
		ctx := c.Context()
		c.SetValue(ctxKey("role"), "admin") // after Context was made: still seen
		c.SetValue(ctxKey("user"), "bob")   // shadows
		done := make(chan string)
		go func() { done <- ctx.Value(ctxKey("user")).(string) + "/" + ctx.Value(ctxKey("role")).(string) }()
		got := <-done
		c.WriteString(got + " " + c.Value(ctxKey("user")).(string))
		kept <- ctx
	}, serve.Options{})
	c := dial(t, addr)
	c.Send("GET / HTTP/1.1\r\nHost: h\r\n\r\n")
	if _, body := c.Response("GET"); body != "bob/admin bob" {
		t.Fatalf("body %q", body)
	}
	ctx := <-kept
	if ctx.Err() != context.Canceled || ctx.Value(ctxKey("user")) != "bob" {
		t.Fatalf("after the request: Err %v, value %v", ctx.Err(), ctx.Value(ctxKey("user")))
	}
}

// doneRecorder collects what OnDone reports, by path.
type doneRecorder struct {
	mu   sync.Mutex
	done map[string]serve.Done
	seen chan string
}

func newDoneRecorder() *doneRecorder {
	return &doneRecorder{done: map[string]serve.Done{}, seen: make(chan string, 16)}
}

// middleware registers the hook first thing, as an access log would.
func (r *doneRecorder) middleware(next serve.Handler) serve.Handler {
	return func(c *serve.Ctx) {
		path := c.Path()
		c.SetHeader("X-Request-Id", "rid-1")
		c.OnDone(func(d serve.Done) {
			r.mu.Lock()
			r.done[path] = d
			r.mu.Unlock()
			r.seen <- path
		})
		next(c)
	}
}

func (r *doneRecorder) wait(t *testing.T, path string) serve.Done {
	t.Helper()
	for p := range r.seen {
		if p == path {
			r.mu.Lock()
			defer r.mu.Unlock()
			return r.done[path]
		}
	}
	panic("unreachable")
}

// TestOnDoneReportsWhatWentOut: the completion hook sees the final status and size, whoever
// wrote the response: the handler, its continuation, or the server answering for a body error
// — whose answer keeps the fields the middleware set.
func TestOnDoneReportsWhatWentOut(t *testing.T) {
	rec := newDoneRecorder()
	_, addr := startServer(t, rec.middleware(func(c *serve.Ctx) {
		switch c.Path() {
		case "/ok":
			c.WriteString("hello")
		case "/no-content": // written, then dropped by the status: none went out
			c.WriteString("hello")
			c.SetStatus(204)
		case "/later":
			c.Seam().DetachFor(50*time.Millisecond, func(c *serve.Ctx, err error) {
				c.SetStatus(202)
				c.WriteString("accepted")
			})
		case "/upload":
			c.ReadBody(make([]byte, 10)) // fails: over MaxBodyBytes
		case "/panic":
			panic("boom")
		}
	}), serve.Options{MaxBodyBytes: 100})

	c := dial(t, addr)
	c.Send("GET /ok HTTP/1.1\r\nHost: h\r\n\r\n")
	c.Response("GET")
	if d := rec.wait(t, "/ok"); d.Status != 200 || d.Bytes != 5 || d.Err != nil {
		t.Fatalf("/ok: %+v", d)
	}
	c.Send("GET /no-content HTTP/1.1\r\nHost: h\r\n\r\n")
	if resp, body := c.Response("GET"); resp.StatusCode != 204 || body != "" {
		t.Fatalf("/no-content: %d %q", resp.StatusCode, body)
	}
	if d := rec.wait(t, "/no-content"); d.Status != 204 || d.Bytes != 0 {
		t.Fatalf("/no-content: %+v", d)
	}

	c.Send("GET /later HTTP/1.1\r\nHost: h\r\n\r\n")
	c.Response("GET")
	if d := rec.wait(t, "/later"); d.Status != 202 || d.Bytes != 8 || d.Err != nil || d.Duration < 40*time.Millisecond {
		t.Fatalf("/later: %+v", d)
	}

	u := dial(t, addr)
	u.Send("POST /upload HTTP/1.1\r\nHost: h\r\nContent-Length: 1000\r\n\r\n")
	resp, _ := u.Response("POST")
	if resp.StatusCode != 413 || resp.Header.Get("X-Request-Id") != "rid-1" {
		t.Fatalf("/upload: %d, X-Request-Id %q", resp.StatusCode, resp.Header.Get("X-Request-Id"))
	}
	if d := rec.wait(t, "/upload"); d.Status != 413 || d.Err != serve.ErrBodyTooLarge {
		t.Fatalf("/upload: %+v", d)
	}

	p := dial(t, addr)
	p.Send("GET /panic HTTP/1.1\r\nHost: h\r\n\r\n")
	resp, _ = p.Response("GET")
	if resp.StatusCode != 500 || resp.Header.Get("X-Request-Id") != "rid-1" {
		t.Fatalf("/panic: %d, X-Request-Id %q", resp.StatusCode, resp.Header.Get("X-Request-Id"))
	}
	var pe *serve.PanicError
	if d := rec.wait(t, "/panic"); d.Status != 500 || !errors.As(d.Err, &pe) || pe.Value != "boom" {
		t.Fatalf("/panic: %+v", d)
	}
}

// TestOnDoneClientGone: a client that leaves while its handler waits is reported as ErrClosed.
func TestOnDoneClientGone(t *testing.T) {
	rec := newDoneRecorder()
	_, addr := startServer(t, rec.middleware(func(c *serve.Ctx) {
		c.Suspend(0)
	}), serve.Options{})
	c := dial(t, addr)
	c.Send("GET /wait HTTP/1.1\r\nHost: h\r\n\r\n")
	c.Close()
	if d := rec.wait(t, "/wait"); d.Err != serve.ErrClosed {
		t.Fatalf("%+v", d)
	}
}

// upperFilter is a body filter that upper-cases what passes, and counts its calls.
type upperFilter struct {
	next           serve.BodyWriter
	flushes, close atomic.Int32 // read by the test's goroutine
}

func (f *upperFilter) Write(p []byte) (int, error) {
	if _, err := f.next.Write(bytes.ToUpper(p)); err != nil {
		return 0, err
	}
	return len(p), nil
}
func (f *upperFilter) Flush() error { f.flushes.Add(1); return f.next.Flush() }
func (f *upperFilter) Close() error {
	f.close.Add(1)
	_, err := f.next.Write([]byte("!"))
	return err
}

// TestWrapBody: writes, flushes and SendFile go through the filter, whose Close runs once at
// the end; a large filtered body still streams with backpressure.
func TestWrapBody(t *testing.T) {
	filters := make(chan *upperFilter, 4)
	_, addr := startServer(t, func(c *serve.Ctx) {
		var f *upperFilter
		c.Seam().WrapBody(func(next serve.BodyWriter) serve.BodyWriter {
			f = &upperFilter{next: next}
			return f
		})
		switch c.Path() {
		case "/small":
			c.WriteString("hello ")
			c.Flush()
			c.WriteString("world")
		case "/large":
			chunk := bytes.Repeat([]byte("abcdefgh"), 8<<10)
			for range 64 { // 4 MiB through a 64 KiB high-water mark
				if _, err := c.Write(chunk); err != nil {
					break
				}
			}
		}
		filters <- f
	}, serve.Options{WriteHighWater: 64 << 10})
	c := dial(t, addr)
	c.Send("GET /small HTTP/1.1\r\nHost: h\r\n\r\n")
	if _, body := c.Response("GET"); body != "HELLO WORLD!" {
		t.Fatalf("body %q", body)
	}
	// Close ran before the response's end was queued, so before the client could read it.
	if f := <-filters; f.flushes.Load() != 1 || f.close.Load() != 1 {
		t.Fatalf("flushes %d, closes %d", f.flushes.Load(), f.close.Load())
	}
	c.Send("GET /large HTTP/1.1\r\nHost: h\r\n\r\n")
	_, body := c.Response("GET")
	if len(body) != 4<<20+1 || !strings.HasPrefix(body, "ABCDEFGH") || !strings.HasSuffix(body, "H!") {
		t.Fatalf("large body: %d bytes", len(body))
	}
}

// TestSetTimeout: a handler past its deadline wakes with ErrDeadline, its Context says
// DeadlineExceeded, and the client gets 503 when nothing was sent.
func TestSetTimeout(t *testing.T) {
	rec := newDoneRecorder()
	errs := make(chan error, 1)
	_, addr := startServer(t, rec.middleware(func(c *serve.Ctx) {
		c.SetTimeout(30 * time.Millisecond)
		if _, ok := c.Context().Deadline(); !ok {
			errs <- errors.New("no deadline on the context")
			return
		}
		c.WriteString("held back")
		err := c.Suspend(0)
		if c.Context().Err() != context.DeadlineExceeded {
			err = errors.New("context: " + c.Context().Err().Error())
		}
		errs <- err
	}), serve.Options{})
	c := dial(t, addr)
	c.Send("GET /slow HTTP/1.1\r\nHost: h\r\n\r\n")
	resp, body := c.Response("GET")
	if err := <-errs; err != serve.ErrDeadline || !errors.Is(err, serve.ErrTimeout) {
		t.Fatalf("handler woke with %v", err)
	}
	if resp.StatusCode != 503 || strings.Contains(body, "held back") || resp.Header.Get("X-Request-Id") != "rid-1" {
		t.Fatalf("%d %q", resp.StatusCode, body)
	}
	if d := rec.wait(t, "/slow"); d.Status != 503 || d.Err != serve.ErrDeadline {
		t.Fatalf("%+v", d)
	}
}

// TestWakeOnShutdown: a wait that asked ends as soon as a shutdown begins, and its response
// still goes out; a wait that did not ask goes on until its own end.
func TestWakeOnShutdown(t *testing.T) {
	parked := make(chan struct{}, 2)
	s, addr := startServer(t, func(c *serve.Ctx) {
		if c.Path() == "/poll" {
			c.Seam().WakeOnShutdown()
			parked <- struct{}{}
			err := c.Suspend(0)
			c.WriteString("poll: " + errString(err))
			return
		}
		parked <- struct{}{}
		err := c.Suspend(200 * time.Millisecond)
		c.WriteString("sleep: " + errString(err))
	}, serve.Options{})
	p := dial(t, addr)
	p.Send("GET /poll HTTP/1.1\r\nHost: h\r\n\r\n")
	q := dial(t, addr)
	q.Send("GET /sleep HTTP/1.1\r\nHost: h\r\n\r\n")
	<-parked
	<-parked
	shut := make(chan error, 1)
	go func() { shut <- s.Shutdown(context.Background()) }()
	if _, body := p.Response("GET"); body != "poll: "+serve.ErrShutdown.Error() {
		t.Fatalf("poll: %q", body)
	}
	if _, body := q.Response("GET"); body != "sleep: "+serve.ErrTimeout.Error() {
		t.Fatalf("sleep: %q", body)
	}
	if err := <-shut; err != nil {
		t.Fatal(err)
	}
}

func errString(err error) string {
	if err == nil {
		return "nil"
	}
	return err.Error()
}

// TestLimitBody: a per-request limit below the server's fails a declared length at once and a
// chunked body as it crosses it; the server's 413 follows.
func TestLimitBody(t *testing.T) {
	errs := make(chan error, 2)
	_, addr := startServer(t, func(c *serve.Ctx) {
		c.Seam().LimitBody(10)
		_, err := io.ReadAll(ctxBody{c})
		errs <- err
	}, serve.Options{})
	for _, req := range []string{
		"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 11\r\nExpect: 100-continue\r\n\r\n",
		"POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n6\r\nabcdef\r\n6\r\nghijkl\r\n0\r\n\r\n",
	} {
		c := dial(t, addr)
		c.Send(req)
		resp, _ := c.Response("POST") // no 100 Continue came first: ReadResponse would return it
		if resp.StatusCode != 413 {
			t.Fatalf("status %d", resp.StatusCode)
		}
		if err := <-errs; err != serve.ErrBodyTooLarge {
			t.Fatalf("read error %v", err)
		}
	}
}

type ctxBody struct{ c *serve.Ctx }

func (b ctxBody) Read(p []byte) (int, error) { return b.c.ReadBody(p) }

// TestQueryValuesAndHeaders: every value of a query parameter, and the fields in order.
func TestQueryValuesAndHeaders(t *testing.T) {
	_, addr := startServer(t, func(c *serve.Ctx) {
		var b strings.Builder
		var tags []string
		for v := range c.Bytes().QueryValues("tag") {
			tags = append(tags, string(v))
		}
		b.WriteString(strings.Join(tags, ","))
		for k, v := range c.Headers() {
			b.WriteString(" " + k + "=" + v)
		}
		c.WriteString(b.String())
	}, serve.Options{})
	c := dial(t, addr)
	c.Send("GET /?tag=a&x=1&tag=b+c&tag=%64 HTTP/1.1\r\nHost: h\r\nX-A: 1\r\n\r\n")
	if _, body := c.Response("GET"); body != "a,b c,d Host=h X-A=1" {
		t.Fatalf("body %q", body)
	}
}

// TestOnPanic: a responder answers for a panic of the handler and of a continuation alike; one
// that writes nothing, or panics itself, leaves the server's 500.
func TestOnPanic(t *testing.T) {
	_, addr := startServer(t, func(c *serve.Ctx) {
		c.SetHeader("X-Request-Id", "r")
		c.SetHeader("Content-Type", "text/html") // describes content that never comes
		c.Seam().OnPanic(func(c *serve.Ctx, v any) {
			switch c.Path() {
			case "/silent":
			case "/twice":
				panic("again")
			default:
				c.SetStatus(500)
				c.SetHeader("Content-Type", "application/json")
				c.WriteString(`{"error":"` + v.(string) + `"}`)
			}
		})
		c.WriteString("lost")
		if c.Path() == "/continuation" {
			c.Seam().DetachFor(time.Millisecond, func(c *serve.Ctx, err error) { panic("late") })
			return
		}
		panic("boom")
	}, serve.Options{})
	for _, tc := range []struct{ path, ctype, body string }{
		{"/handler", "application/json", `{"error":"boom"}`},
		// The request's path is gone in a continuation (see Ctx): the default branch answers.
		{"/continuation", "application/json", `{"error":"late"}`},
		{"/silent", "text/plain; charset=utf-8", "500 Internal Server Error: the handler failed\n"},
		{"/twice", "text/plain; charset=utf-8", "500 Internal Server Error: the handler failed\n"},
	} {
		c := dial(t, addr)
		c.Send("GET " + tc.path + " HTTP/1.1\r\nHost: h\r\n\r\n")
		resp, body := c.Response("GET")
		if resp.StatusCode != 500 || resp.Header.Get("Content-Type") != tc.ctype || body != tc.body ||
			resp.Header.Get("X-Request-Id") != "r" {
			t.Errorf("%s: %d %q %q %v", tc.path, resp.StatusCode, resp.Header.Get("Content-Type"), body, resp.Header)
		}
	}
}
