package http1

import (
	"net/http"
	"testing"

	"github.com/dwellhttp/dwell/core/internal/gid"
	"github.com/dwellhttp/dwell/core/internal/serve"
)

// TestOnLoopStack: the work a handler sends to the loop's stack runs on the loop's goroutine,
// not the handler's coroutine, holding the handler's right to its Ctx (it sets the response's
// fields) but unable to park; the handler goes on after it, and a panic in it goes on in the
// handler, answered 500 as the handler's own would be.
func TestOnLoopStack(t *testing.T) {
	type seen struct {
		handlerG, workG, loopG   uintptr
		inHandler, workInHandler bool
	}
	got := make(chan seen, 1)
	_, addr := startServer(t, func(c *serve.Ctx) {
		var s seen
		s.handlerG = gid.Self()
		s.inHandler = c.Seam().MayPark()
		ret := c.Seam().OnLoopStack(func(p any, b []byte, n int) int {
			s := p.(*seen)
			s.workG = gid.Self()
			s.loopG = c.Loop.Goroutine
			s.workInHandler = c.Seam().MayPark()
			c.SetHeader("X-Work", string(b))
			return n + 1
		}, &s, []byte("on the loop"), 41)
		if ret != 42 {
			t.Errorf("the work's result: %d, want 42", ret)
		}
		if c.Path() == "/panic" {
			c.Seam().OnLoopStack(func(any, []byte, int) int { panic("in the work") }, nil, nil, 0)
			t.Error("the handler went on after its work panicked")
		}
		got <- s
		c.WriteString("after")
	}, serve.Options{})
	c := dial(t, addr)
	c.Send("GET / HTTP/1.1\r\nHost: h\r\n\r\n")
	resp, err := http.ReadResponse(c.R, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("X-Work") != "on the loop" {
		t.Fatalf("the response: %d %v", resp.StatusCode, resp.Header)
	}
	s := receive(t, "what the handler saw", got)
	if !s.inHandler || s.workInHandler {
		t.Errorf("InHandler: %v in the handler, %v in its work (want true, false)", s.inHandler, s.workInHandler)
	}
	if s.workG == s.handlerG || s.workG != s.loopG {
		t.Errorf("the work ran on goroutine %d; the handler's is %d, the loop's %d", s.workG, s.handlerG, s.loopG)
	}

	c.Send("GET /panic HTTP/1.1\r\nHost: h\r\n\r\n")
	resp, err = http.ReadResponse(c.R, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 500 {
		t.Fatalf("a panic in the work: %d, want 500", resp.StatusCode)
	}
}
