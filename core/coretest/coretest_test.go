package coretest_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/core/coretest"
)

// hello is the handler under test.
func hello(c *core.Ctx) {
	c.SetHeader("Content-Type", "text/plain")
	c.WriteString("Hello World")
}

// TestServeAndDial is how a handler's test looks: serve it, send bytes, read responses.
func TestServeAndDial(t *testing.T) {
	_, addr := coretest.Serve(t, hello, core.Options{})
	c := coretest.Dial(t, addr)
	c.Send("GET / HTTP/1.1\r\nHost: example\r\n\r\nGET / HTTP/1.1\r\nHost: example\r\nConnection: close\r\n\r\n")
	for i := range 2 {
		resp, body := c.Response("GET")
		if got := fmt.Sprint(resp.StatusCode, " ", resp.ContentLength, " ", body); got != "200 11 Hello World" {
			t.Fatalf("response %d: %s", i, got)
		}
	}
	c.ExpectEOF()
}

func TestAllocsPerRequest(t *testing.T) {
	_, addr := coretest.Serve(t, hello, core.Options{})
	rt := coretest.NewRoundTripper(t, addr, "GET / HTTP/1.1\r\nHost: example\r\n\r\n")
	if raceEnabled || portablePoller {
		t.Skip("the race detector and the portable poller allocate")
	}
	if n := testing.AllocsPerRun(500, func() { rt.Do(t) }); n != 0 {
		t.Fatalf("%v allocations per request", n)
	}
}

// TestWaitForAndReceive: WaitFor returns once its condition holds and Receive returns what was
// sent, both from another goroutine's doing.
func TestWaitForAndReceive(t *testing.T) {
	var mu sync.Mutex
	n := 0
	ch := make(chan string)
	go func() {
		for range 3 {
			mu.Lock()
			n++
			mu.Unlock()
		}
		ch <- "sent"
	}()
	coretest.WaitFor(t, "three increments", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return n == 3
	})
	if got := coretest.Receive(t, "the send", ch); got != "sent" {
		t.Fatalf("Receive returned %q", got)
	}
}
