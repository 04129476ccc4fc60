package nethttp

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/core/coretest"
)

// TestFlush: a flushed event reaches the client while the handler is still running.
func TestFlush(t *testing.T) {
	next := make(chan struct{})
	_, addr := serveStd(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, ev := range []string{"data: 1\n\n", "data: 2\n\n"} {
			io.WriteString(w, ev)
			w.(http.Flusher).Flush()
			<-next
		}
	}, core.Options{})
	cl := coretest.Dial(t, addr)
	cl.Send("GET / HTTP/1.1\r\nHost: h\r\n\r\n")
	resp, err := http.ReadResponse(cl.R, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Header.Get("Content-Type") != "text/event-stream" || resp.TransferEncoding == nil {
		t.Errorf("head: %v %v", resp.Header, resp.TransferEncoding)
	}
	br := bufio.NewReader(resp.Body)
	for _, want := range []string{"data: 1\n", "\n", "data: 2\n", "\n"} {
		if want == "data: 2\n" {
			next <- struct{}{}
		}
		if line, err := br.ReadString('\n'); line != want {
			t.Fatalf("read %q (%v), want %q", line, err, want)
		}
	}
	close(next)
	if rest, err := io.ReadAll(br); err != nil || len(rest) != 0 {
		t.Errorf("end: %q %v", rest, err)
	}
}

// TestBackpressure: a client that stops reading stops the handler's goroutine in Write once
// the server holds its high-water mark: the bytes the handler got rid of stay bounded (the
// kernel's socket buffers and the server's few hundred KiB), and so does the process's heap.
// Once the client reads again, every byte arrives.
func TestBackpressure(t *testing.T) {
	const total = 64 << 20
	var accepted atomic.Int64
	done := make(chan error, 1)
	_, addr := serveStd(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "67108864")
		chunk := make([]byte, 32<<10)
		for accepted.Load() < total {
			n, err := w.Write(chunk)
			accepted.Add(int64(n))
			if err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}, core.Options{})
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.(*net.TCPConn).SetReadBuffer(64 << 10)
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	io.WriteString(conn, "GET / HTTP/1.1\r\nHost: h\r\n\r\n")

	// Wait for the handler to stop making progress: it is blocked in Write.
	const bound = 16 << 20
	last, still := int64(-1), 0
	for deadline := time.Now().Add(coretest.Patience); still < 5 && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
		n := accepted.Load()
		if n > bound {
			t.Fatalf("the handler wrote %d bytes to a client that reads nothing", n)
		}
		if n == last {
			still++
		} else {
			last, still = n, 0
		}
	}
	if still < 5 || last <= 0 || last >= total {
		t.Fatalf("the handler did not block: %d bytes accepted", last)
	}
	t.Logf("the handler blocked after %d bytes", last)
	var during runtime.MemStats
	runtime.ReadMemStats(&during)
	if grew := int64(during.HeapInuse) - int64(before.HeapInuse); grew > 8<<20 {
		t.Errorf("heap grew by %d bytes while the client did not read", grew)
	}

	conn.SetReadDeadline(time.Now().Add(coretest.Patience))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	n, err := io.Copy(io.Discard, resp.Body)
	if n != total || err != nil {
		t.Errorf("read %d bytes (%v), want %d", n, err, total)
	}
	if err := <-done; err != nil {
		t.Errorf("handler: %v", err)
	}
}

// TestCancelOnDisconnect: the request's context is cancelled when the client goes away, while
// the handler waits on it.
func TestCancelOnDisconnect(t *testing.T) {
	waiting := make(chan struct{})
	cancelled := make(chan error, 1)
	_, addr := serveStd(t, func(w http.ResponseWriter, r *http.Request) {
		close(waiting)
		<-r.Context().Done()
		cancelled <- r.Context().Err()
	}, core.Options{})
	cl := coretest.Dial(t, addr)
	cl.Send("GET / HTTP/1.1\r\nHost: h\r\n\r\n")
	<-waiting
	cl.Close()
	select {
	case err := <-cancelled:
		if err != context.Canceled {
			t.Errorf("context error %v", err)
		}
	case <-time.After(coretest.Patience):
		t.Fatal("the context was not cancelled when the client left")
	}
}

// TestCancelOnShutdown: a handler waiting on its context is cancelled when a shutdown's grace
// period ends; having written nothing, its client gets the server's 503, and the server stops.
func TestCancelOnShutdown(t *testing.T) {
	waiting := make(chan struct{})
	cancelled := make(chan error, 1)
	s, addr := serveStd(t, func(w http.ResponseWriter, r *http.Request) {
		close(waiting)
		<-r.Context().Done()
		cancelled <- r.Context().Err()
	}, core.Options{})
	cl := coretest.Dial(t, addr)
	cl.Send("GET / HTTP/1.1\r\nHost: h\r\n\r\n")
	<-waiting
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if err := s.Shutdown(ctx); err != context.DeadlineExceeded {
		t.Errorf("Shutdown: %v", err)
	}
	select {
	case err := <-cancelled:
		if err != context.Canceled {
			t.Errorf("context error %v", err)
		}
	case <-time.After(coretest.Patience):
		t.Fatal("the context was not cancelled at the end of the grace period")
	}
	if resp, _ := cl.Response("GET"); resp.StatusCode != 503 {
		t.Errorf("status %d, want 503", resp.StatusCode)
	}
	cl.ExpectEOF()
}

// TestCancelOnReturn: the request's context, kept by the handler, is cancelled once it returns.
func TestCancelOnReturn(t *testing.T) {
	kept := make(chan context.Context, 1)
	_, addr := serveStd(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Context().Err() != nil {
			t.Error("context cancelled while the handler runs")
		}
		kept <- r.Context()
	}, core.Options{})
	cl := coretest.Dial(t, addr)
	cl.Send("GET / HTTP/1.1\r\nHost: h\r\n\r\n")
	cl.Response("GET")
	ctx := <-kept
	select {
	case <-ctx.Done():
	case <-time.After(coretest.Patience):
		t.Fatal("the context outlived the handler")
	}
}

// TestPanic: a net/http handler that panics before writing gets the server's 500, and one that
// panics after its response started has it cut short; both are logged with the handler's own
// stack.
func TestPanic(t *testing.T) {
	logger, logs := captureLogs(t, false)
	_, addr := serveStd(t, func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "partial")
		if r.URL.Path == "/late" {
			w.(http.Flusher).Flush()
		}
		panic("boom " + r.URL.Path)
	}, core.Options{Logger: logger})
	cl := coretest.Dial(t, addr)
	cl.Send("GET /early HTTP/1.1\r\nHost: h\r\n\r\n")
	if resp, body := cl.Response("GET"); resp.StatusCode != 500 || strings.Contains(body, "partial") {
		t.Errorf("early panic: %d %q", resp.StatusCode, body)
	}
	cl.ExpectEOF()
	cl = coretest.Dial(t, addr)
	cl.Send("GET /late HTTP/1.1\r\nHost: h\r\n\r\n")
	resp, err := http.ReadResponse(cl.R, nil)
	if err != nil {
		t.Fatal(err)
	}
	if b, err := io.ReadAll(resp.Body); resp.StatusCode != 200 || string(b) != "partial" ||
		err != io.ErrUnexpectedEOF {
		t.Errorf("late panic: %d %q %v, want the response cut short", resp.StatusCode, b, err)
	}
	for _, want := range []string{"boom /early", "boom /late", "TestPanic.func1"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("log lacks %q: %s", want, logs.String())
		}
	}
}

// TestAbortHandler: panic(http.ErrAbortHandler) cuts the response short, or closes the
// connection without one, and logs nothing.
func TestAbortHandler(t *testing.T) {
	logger, logs := captureLogs(t, false)
	_, addr := serveStd(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/late" {
			io.WriteString(w, "partial")
			w.(http.Flusher).Flush()
		}
		panic(http.ErrAbortHandler)
	}, core.Options{Logger: logger})
	cl := coretest.Dial(t, addr)
	cl.Send("GET /early HTTP/1.1\r\nHost: h\r\n\r\n")
	cl.ExpectEOF()
	cl = coretest.Dial(t, addr)
	cl.Send("GET /late HTTP/1.1\r\nHost: h\r\n\r\n")
	resp, err := http.ReadResponse(cl.R, nil)
	if err != nil {
		t.Fatal(err)
	}
	if b, err := io.ReadAll(resp.Body); string(b) != "partial" || err != io.ErrUnexpectedEOF {
		t.Errorf("late abort: %q %v, want the response cut short", b, err)
	}
	if strings.Contains(logs.String(), "panic") {
		t.Errorf("an abort was logged: %s", logs.String())
	}
}

// TestGoexit: a handler that calls runtime.Goexit (t.FailNow in a test server, say) gets a 500,
// and the pool serves the next request with a new goroutine.
func TestGoexit(t *testing.T) {
	_, addr := serveStd(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/exit" {
			runtime.Goexit()
		}
		io.WriteString(w, "ok")
	}, core.Options{})
	cl := coretest.Dial(t, addr)
	cl.Send("GET /exit HTTP/1.1\r\nHost: h\r\n\r\n")
	if resp, _ := cl.Response("GET"); resp.StatusCode != 500 {
		t.Errorf("Goexit: status %d", resp.StatusCode)
	}
	cl = coretest.Dial(t, addr)
	cl.Send("GET /next HTTP/1.1\r\nHost: h\r\n\r\n")
	if _, body := cl.Response("GET"); body != "ok" {
		t.Errorf("after Goexit: %q", body)
	}
}

// TestWorkerBound: no more net/http handlers run at once than SetWorkers allows; the
// others wait their turn and are all served.
func TestWorkerBound(t *testing.T) {
	SetWorkers(2)
	defer SetWorkers(0)
	const n = 6
	var running, most atomic.Int32
	arrived, started := make(chan struct{}, n), make(chan struct{}, n)
	gate := make(chan struct{})
	h := Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		k := running.Add(1)
		for m := most.Load(); k > m && !most.CompareAndSwap(m, k); m = most.Load() {
		}
		started <- struct{}{}
		<-gate
		running.Add(-1)
		io.WriteString(w, "ok")
	}))
	_, addr := coretest.Serve(t, func(c *core.Ctx) { arrived <- struct{}{}; h(c) }, core.Options{})
	results := make(chan string, n)
	for range n {
		go func() {
			resp, err := http.Get("http://" + addr + "/")
			if err != nil {
				results <- err.Error()
				return
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			results <- string(b)
		}()
	}
	for range n {
		<-arrived
	}
	<-started
	<-started
	close(gate)
	for range n {
		if got := <-results; got != "ok" {
			t.Errorf("response %q", got)
		}
	}
	if m := most.Load(); m != 2 {
		t.Errorf("%d handlers ran at once, want 2", m)
	}
}

// TestNotInHandler: the handler of Handler called from a continuation, where it cannot
// park, panics (the server answers 500) rather than block the loop.
func TestNotInHandler(t *testing.T) {
	h := Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "never sent")
	}))
	_, addr := coretest.Serve(t, func(c *core.Ctx) {
		c.Detach(time.Millisecond, func(c *core.Ctx, err error) { h(c) })
	}, core.Options{})
	cl := coretest.Dial(t, addr)
	cl.Send("GET / HTTP/1.1\r\nHost: h\r\n\r\n")
	if resp, body := cl.Response("GET"); resp.StatusCode != 500 {
		t.Errorf("status %d %q", resp.StatusCode, body)
	}
}

// TestHandlerOutlivesResetConnection: a client that resets its connection during a shutdown
// closes it at once, but the loop waits for the net/http handler still running on it: the
// handler sees its request's context cancelled, its later writes fail with ErrClosed, and the
// shutdown completes once it has returned.
func TestHandlerOutlivesResetConnection(t *testing.T) {
	started, proceed := make(chan struct{}), make(chan struct{})
	var release sync.Once
	defer release.Do(func() { close(proceed) })
	errs := make(chan error, 1)
	cancelled := make(chan struct{})
	s, addr := serveStd(t, func(w http.ResponseWriter, r *http.Request) {
		close(started)
		<-r.Context().Done()
		close(cancelled)
		<-proceed
		_, err := w.Write(make([]byte, 64<<10))
		errs <- err
	}, core.Options{})
	cl := coretest.Dial(t, addr)
	cl.Send("GET / HTTP/1.1\r\nHost: h\r\n\r\n")
	<-started
	stopped := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		stopped <- s.Shutdown(ctx)
	}()
	for {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			break // the shutdown has begun: no more connections
		}
		c.Close()
	}
	cl.SetLinger(0)
	cl.Close()
	<-cancelled // the handler learns its client is gone
	select {
	case err := <-stopped:
		t.Fatalf("Shutdown returned (%v) while the handler still ran", err)
	default:
	}
	release.Do(func() { close(proceed) })
	if err := <-errs; err != core.ErrClosed {
		t.Errorf("write after the client left: %v", err)
	}
	if err := <-stopped; err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
}
