package http1

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dwellhttp/dwell/core/internal/serve"
)

// TestStallIsReported: a handler that blocks its loop (on a channel, as code that waits for
// another goroutine without package wait does) is a stall: once the watchdog has seen it, and
// the handler goes on, one line is logged with the loop, the time blocked, the route and path,
// and the handler's stack; the counter moves, and a request after it is no stall.
func TestStallIsReported(t *testing.T) {
	var logs logBuffer
	release := make(chan struct{})
	var once sync.Once
	serve.TestHookStall = func(*serve.Loop) { once.Do(func() { close(release) }) }
	t.Cleanup(func() { serve.TestHookStall = nil })
	route := serve.NewRoute("/block/:n")
	s, addr := startServer(t, func(c *serve.Ctx) {
		if c.Path() == "/block/1" {
			c.Seam().SetRoute(route)
			<-release // blocks the loop until the watchdog has noted it
		}
		c.WriteString("done")
	}, serve.Options{StallThreshold: 20 * time.Millisecond, Logger: newTestLogger(&logs), Loops: 1}) // the line says loop=0
	c := dial(t, addr)
	c.Send("GET /block/1 HTTP/1.1\r\nHost: h\r\n\r\n")
	if _, body := c.Response("GET"); body != "done" {
		t.Fatal(body)
	}
	c.Send("GET /after HTTP/1.1\r\nHost: h\r\n\r\n")
	c.Response("GET")
	// The watchdog notes a handler once it has seen it running three quarters of the threshold
	// apart (engine's StallWatch.check), and the hook then releases it at once: the turn lasted
	// that long at least, not necessarily the whole threshold.
	n, longest := s.Stalls()
	if n != 1 || longest < 15*time.Millisecond {
		t.Errorf("Stalls() = %d, %v; want 1 and at least three quarters of the threshold", n, longest)
	}
	out := logs.String()
	if got := strings.Count(out, "loop stalled"); got != 1 {
		t.Fatalf("%d stall lines, want 1:\n%s", got, out)
	}
	for _, want := range []string{"loop=0", "route=/block/:n", "path=/block/1", "blocked=", "TestStallIsReported"} {
		if !strings.Contains(out, want) {
			t.Errorf("the stall line lacks %q:\n%s", want, out)
		}
	}
}

// TestStallInLoopCallback: a stall outside any request (a Post callback that blocks) is
// reported too, without a route.
func TestStallInLoopCallback(t *testing.T) {
	var logs logBuffer
	release := make(chan struct{})
	var once sync.Once
	serve.TestHookStall = func(*serve.Loop) { once.Do(func() { close(release) }) }
	t.Cleanup(func() { serve.TestHookStall = nil })
	posted := make(chan struct{})
	s, addr := startServer(t, func(c *serve.Ctx) {
		c.Seam().Loop().Post(func() {
			<-release
			close(posted)
		})
		c.WriteString("done")
	}, serve.Options{StallThreshold: 20 * time.Millisecond, Logger: newTestLogger(&logs)})
	c := dial(t, addr)
	c.Send("GET / HTTP/1.1\r\nHost: h\r\n\r\n")
	c.Response("GET")
	receive(t, "the callback", posted)
	c.Send("GET / HTTP/1.1\r\nHost: h\r\n\r\n") // the turn after the callback's has ended
	c.Response("GET")
	waitFor(t, "the stall to be counted", func() bool { n, _ := s.Stalls(); return n == 1 })
	out := logs.String()
	if strings.Count(out, "loop stalled") != 1 || strings.Contains(out, "route=") ||
		!strings.Contains(out, "TestStallInLoopCallback") {
		t.Fatalf("log:\n%s", out)
	}
}
