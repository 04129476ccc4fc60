package http1

import (
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dwellhttp/dwell/core/internal/serve"
)

// Pipelined requests run one after another in the same coroutine while each handler returns
// (see Loop.chain). Every way a handler can end must still end only its own request, in order:
// parking (here after a returned request, so in a coroutine that went on by itself),
// detaching, reading its body or leaving it unread, completion hooks, and panicking.
func TestPipelinedRequestsEndEachTheirOwnWay(t *testing.T) {
	var hooked, doneAfter200 atomic.Int32
	_, addr := startServer(t, func(c *serve.Ctx) {
		switch c.Path() {
		case "/park":
			if err := c.Suspend(time.Millisecond); err != serve.ErrTimeout {
				c.WriteString("Suspend: " + fmt.Sprint(err))
				return
			}
		case "/panic":
			panic("on purpose")
		case "/detach":
			c.Detach(time.Millisecond, func(c *serve.Ctx, err error) { c.WriteString("detach " + fmt.Sprint(err == serve.ErrTimeout)) })
			return
		case "/body":
			var b []byte
			buf := make([]byte, 2)
			var err error
			for err == nil {
				var n int
				n, err = c.ReadBody(buf)
				b = append(b, buf[:n]...)
			}
			c.WriteString("body " + string(b) + " " + fmt.Sprint(err))
			return
		case "/hook":
			c.OnDone(func(d serve.Done) {
				hooked.Add(1)
				if d.Status == 200 {
					doneAfter200.Add(1)
				}
			})
		}
		c.WriteString(c.Path())
	}, serve.Options{})
	c := dial(t, addr)
	reqs := []struct{ method, path, body string }{
		{"GET", "/plain", ""},
		{"GET", "/park", ""},
		{"GET", "/detach", ""},
		{"POST", "/body", "hello"},
		{"GET", "/hook", ""},
		{"POST", "/unread", "abcde"},
		{"GET", "/last", ""},
		{"GET", "/panic", ""}, // the server closes the connection after a panic's 500
	}
	var sb strings.Builder
	for _, r := range reqs {
		fmt.Fprintf(&sb, "%s %s HTTP/1.1\r\nHost: h\r\nContent-Length: %d\r\n\r\n%s", r.method, r.path, len(r.body), r.body)
	}
	c.Send(sb.String()) // one write: every request is complete in the first read
	want := []struct {
		status int
		body   string
	}{
		{200, "/plain"}, {200, "/park"}, {200, "detach true"}, {200, "body hello EOF"},
		{200, "/hook"}, {200, "/unread"}, {200, "/last"}, {500, ""},
	}
	for i, w := range want {
		resp, body := c.Response(reqs[i].method)
		if resp.StatusCode != w.status || (w.body != "" && body != w.body) {
			t.Fatalf("response %d (%s): %d %q, want %d %q", i, reqs[i].path, resp.StatusCode, body, w.status, w.body)
		}
	}
	c.ExpectEOF()
	// The hook ran once, before its response was written.
	if hooked.Load() != 1 || doneAfter200.Load() != 1 {
		t.Fatalf("OnDone ran %d times (%d with status 200), want once", hooked.Load(), doneAfter200.Load())
	}
}
