package http1

import (
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dwellhttp/dwell/core/internal/serve"
)

// TestGoroutineRefusedWhileHandlerRuns: a goroutine the handler started calls the Ctx while
// the handler is running (it waits, spinning, for the call to be over): the call is refused,
// and the response is the handler's alone.
func TestGoroutineRefusedWhileHandlerRuns(t *testing.T) {
	var refused atomic.Value
	_, addr := startServer(t, func(c *serve.Ctx) {
		var done atomic.Bool
		go func() {
			defer done.Store(true)
			defer func() { refused.Store(fmt.Sprint(recover())) }()
			c.SetHeader("X-Leaked", "yes")
		}()
		for !done.Load() {
		}
		c.WriteString("handler")
	}, serve.Options{})
	c := dial(t, addr)
	c.Send("GET / HTTP/1.1\r\nHost: h\r\n\r\n")
	resp, body := c.Response("GET")
	if body != "handler" || resp.Header.Get("X-Leaked") != "" {
		t.Fatalf("response %v %q: the goroutine's call went through", resp.Header, body)
	}
	if got, _ := refused.Load().(string); !strings.Contains(got, "Ctx.SetHeader called outside its request") {
		t.Fatalf("the goroutine's SetHeader: %q", got)
	}
}

// TestOtherRequestsCodeRefused: on the same loop, a handler that uses another request's Ctx
// (kept in a variable while that request is parked) is refused, and so is a Post callback or a
// timer; the parked request goes on untouched.
func TestOtherRequestsCodeRefused(t *testing.T) {
	var parked *serve.Ctx
	parkedWake := make(chan serve.Waker, 1)
	results := make(chan string, 3)
	refusal := func(f func()) (r string) {
		defer func() {
			v := recover()
			err, _ := v.(error)
			r = fmt.Sprintf("refused with ErrOutsideRequest: %v", errors.Is(err, serve.ErrOutsideRequest))
			if v == nil {
				r = "went through"
			}
		}()
		f()
		return
	}
	_, addr := startServer(t, func(c *serve.Ctx) {
		switch c.Path() {
		case "/park":
			parked = c
			parkedWake <- c.Waker()
			err := c.Suspend(0)
			c.WriteString(fmt.Sprintf("parked: %v", err))
		case "/other":
			results <- refusal(func() { parked.SetStatus(500) })
			c.Seam().Loop().Post(func() { results <- refusal(func() { parked.SetHeader("X-Post", "1") }) })
			c.Seam().Loop().AfterFunc(0, func() { results <- refusal(func() { parked.Header("Host") }) })
			c.WriteString("other")
		}
	}, serve.Options{Loops: 1}) // the other request runs on the parked one's loop
	p := dial(t, addr)
	p.Send("GET /park HTTP/1.1\r\nHost: h\r\n\r\n")
	wake := receive(t, "the request to park", parkedWake)
	o := dial(t, addr)
	o.Send("GET /other HTTP/1.1\r\nHost: h\r\n\r\n")
	if _, body := o.Response("GET"); body != "other" {
		t.Fatal(body)
	}
	for range 3 {
		if r := receive(t, "a use of the parked request's Ctx", results); r != "refused with ErrOutsideRequest: true" {
			t.Errorf("a use of the parked request's Ctx by other code: %s", r)
		}
	}
	wake.Wake(nil)
	resp, body := p.Response("GET")
	if resp.StatusCode != 200 || body != "parked: <nil>" || resp.Header.Get("X-Post") != "" {
		t.Fatalf("the parked request answered %d %v %q", resp.StatusCode, resp.Header, body)
	}
}

// TestOnLoopOnlyOnTheLoop: onLoop, which diagnoses misuse of what is the loop's, is true in a handler and in a Post callback, and false on
// any other goroutine — while the loop waits for events, and while it runs a handler (which
// spins until the goroutine has asked), on every architecture.
func TestOnLoopOnlyOnTheLoop(t *testing.T) {
	type seen struct{ handler, goroutineBusy bool }
	results := make(chan seen, 1)
	loops := make(chan *serve.Loop, 1)
	_, addr := startServer(t, func(c *serve.Ctx) {
		l := c.Seam().Loop()
		var asked atomic.Bool
		var busy atomic.Bool
		go func() {
			busy.Store(l.OnLoop())
			asked.Store(true)
		}()
		for !asked.Load() { // the loop is running this handler all along
		}
		results <- seen{l.OnLoop(), busy.Load()}
		loops <- l
		c.WriteString("ok")
	}, serve.Options{})
	c := dial(t, addr)
	c.Send("GET / HTTP/1.1\r\nHost: h\r\n\r\n")
	c.Response("GET")
	s := receive(t, "the handler's answers", results)
	l := receive(t, "the loop", loops)
	if !s.handler || s.goroutineBusy {
		t.Fatalf("onLoop: %v in the handler, %v on a goroutine while the handler runs; want true, false", s.handler, s.goroutineBusy)
	}
	if l.OnLoop() {
		t.Fatal("onLoop: true on the test's goroutine while the loop waits")
	}
	posted := make(chan bool, 1)
	if err := l.Post(func() { posted <- l.OnLoop() }); err != nil {
		t.Fatal(err)
	}
	if !receive(t, "the Post callback's answer", posted) {
		t.Fatal("onLoop: false in a Post callback")
	}
}

// TestTimersOnlyOnTheirLoop: a loop's timers are its own: AfterFunc, Stop and Reset from
// another goroutine panic instead of changing the heap under the loop.
func TestTimersOnlyOnTheirLoop(t *testing.T) {
	loops := make(chan *serve.Loop, 1)
	_, addr := startServer(t, func(c *serve.Ctx) {
		loops <- c.Seam().Loop()
		c.WriteString("ok")
	}, serve.Options{})
	c := dial(t, addr)
	c.Send("GET / HTTP/1.1\r\nHost: h\r\n\r\n")
	c.Response("GET")
	l := receive(t, "the loop", loops)
	defer func() {
		if v := recover(); v == nil || !strings.Contains(fmt.Sprint(v), "called off its loop") {
			t.Fatalf("AfterFunc from another goroutine: %v", v)
		}
	}()
	l.AfterFunc(time.Hour, func() {})
}

// TestHooksAndResponderUseTheCtx: what the server runs for the request — its completion hooks,
// on the loop's goroutine, and its panic responder — is the request's own code and may use it.
func TestHooksAndResponderUseTheCtx(t *testing.T) {
	statuses := make(chan string, 1)
	_, addr := startServer(t, func(c *serve.Ctx) {
		c.OnDone(func(serve.Done) { statuses <- fmt.Sprint(c.ResponseStatus(), " ", c.ResponseHeader("X-Set")) })
		c.Seam().OnPanic(func(c *serve.Ctx, v any) {
			c.SetStatus(503)
			c.WriteString("answered for " + c.Path())
		})
		c.SetHeader("X-Set", "yes")
		panic("boom")
	}, serve.Options{Logger: newTestLogger(&logBuffer{})})
	c := dial(t, addr)
	c.Send("GET /p HTTP/1.1\r\nHost: h\r\n\r\n")
	if resp, body := c.Response("GET"); resp.StatusCode != 503 || body != "answered for /p" {
		t.Fatalf("%d %q", resp.StatusCode, body)
	}
	if got := receive(t, "the hook", statuses); got != "503 yes" {
		t.Fatalf("the hook saw %q", got)
	}
}

// TestHookCannotWriteAfterTheResponse: a completion hook runs once the response is complete;
// what it writes would follow the response on the wire, as a reply to no request, so the write
// fails and the connection carries the next response cleanly.
func TestHookCannotWriteAfterTheResponse(t *testing.T) {
	errs := make(chan error, 2)
	_, addr := startServer(t, func(c *serve.Ctx) {
		c.OnDone(func(serve.Done) {
			_, err := c.WriteString("late")
			errs <- err
		})
		c.WriteString("body")
	}, serve.Options{})
	c := dial(t, addr)
	c.Send("GET / HTTP/1.1\r\nHost: h\r\n\r\nGET / HTTP/1.1\r\nHost: h\r\n\r\n")
	for range 2 {
		if _, body := c.Response("GET"); body != "body" {
			t.Fatalf("body %q", body)
		}
		if err := receive(t, "the hook's write", errs); err == nil {
			t.Fatal("a hook wrote after the response")
		}
	}
}
