package http1

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/dwellhttp/dwell/core/internal/serve"
)

// jsonRefusal writes refusals as JSON, with a field of its own, and tries the fields the server
// keeps for itself.
func jsonRefusal(r *serve.Refusal) {
	r.SetHeader("Content-Type", "application/json")
	r.SetHeader("X-Refusal", "replaced")
	r.SetHeader("x-refusal", fmt.Sprint(r.Status))
	r.SetHeader("Content-Length", "1") // the server's: ignored
	r.SetHeader("Connection", "keep-alive")
	kind := "other"
	var re *serve.RequestError
	var pe *serve.PanicError
	switch {
	case errors.As(r.Err, &re):
		kind = "request: " + re.Reason
	case errors.As(r.Err, &pe):
		kind = fmt.Sprint("panic: ", pe.Value)
	case r.Err != nil:
		kind = r.Err.Error()
	}
	id := ""
	if r.Ctx != nil {
		id, _ = r.Ctx.Value("id").(string)
	}
	fmt.Fprintf(r, `{"status":%d,"error":%q,"id":%q}`, r.Status, kind, id)
}

// TestWriteRefusal: the server's own answers, before a handler and for one, in the
// application's format; the status, the framing and the close stay the server's.
func TestWriteRefusal(t *testing.T) {
	_, addr := startServer(t, func(c *serve.Ctx) {
		c.SetValue("id", "r-7")
		c.SetHeader("X-Request-Id", "r-7")
		switch c.Path() {
		case "/read":
			b := make([]byte, 64)
			for {
				if _, err := c.ReadBody(b); err != nil {
					return
				}
			}
		case "/late":
			c.SetTimeout(time.Millisecond)
			c.Suspend(0)
		case "/panic":
			panic("on purpose")
		}
	}, serve.Options{MaxBodyBytes: 10, MaxHeaderBytes: 4 << 10, WriteRefusal: jsonRefusal})
	for _, tc := range []struct {
		name, req, want string
		id              bool
	}{
		{"no Host", "GET / HTTP/1.1\r\n\r\n", `{"status":400,"error":"request: missing Host header","id":""}`, false},
		{"header too large", "GET / HTTP/1.1\r\nHost: h\r\nX: " + strings.Repeat("a", 5<<10) + "\r\n\r\n",
			`{"status":431,"error":"request: request header fields too large","id":""}`, false},
		{"body too large", "POST /read HTTP/1.1\r\nHost: h\r\nContent-Length: 11\r\n\r\n01234567890",
			`{"status":413,"error":"dwell: request body too large","id":"r-7"}`, true},
		{"deadline", "GET /late HTTP/1.1\r\nHost: h\r\n\r\n", `{"status":503,"error":"` + serve.ErrDeadline.Error() + `","id":"r-7"}`, true},
		{"panic", "GET /panic HTTP/1.1\r\nHost: h\r\n\r\n", `{"status":500,"error":"panic: on purpose","id":"r-7"}`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := dial(t, addr)
			c.Send(tc.req)
			resp, body := c.Response("GET")
			if body != tc.want {
				t.Errorf("body %s, want %s", body, tc.want)
			}
			if resp.Header.Get("Content-Type") != "application/json" || len(resp.Header["X-Refusal"]) != 1 || resp.Header.Get("X-Refusal") != fmt.Sprint(resp.StatusCode) ||
				resp.ContentLength != int64(len(tc.want)) || !resp.Close {
				t.Errorf("head %d %v, length %d, close %v", resp.StatusCode, resp.Header, resp.ContentLength, resp.Close)
			}
			if got := resp.Header.Get("X-Request-Id"); (got == "r-7") != tc.id {
				t.Errorf("X-Request-Id %q", got)
			}
			c.ExpectEOF()
		})
	}
}

// TestWriteRefusalFails: a WriteRefusal that panics is logged, and the server's plain text
// answers; a body past the bound is refused whole.
func TestWriteRefusalFails(t *testing.T) {
	logs := new(logBuffer)
	tooLong := make(chan error, 1)
	_, addr := startServer(t, helloHandler, serve.Options{Logger: newTestLogger(logs), WriteRefusal: func(r *serve.Refusal) {
		if r.Status == 505 {
			_, err := r.Write(make([]byte, 17<<10))
			tooLong <- err
			r.WriteString("short")
			return
		}
		panic("refusal bug")
	}})
	c := dial(t, addr)
	c.Send("GET / HTTP/1.1\r\n\r\n")
	resp, body := c.Response("GET")
	if resp.StatusCode != 400 || body != "400 Bad Request: missing Host header\n" {
		t.Errorf("after a panicking WriteRefusal: %d %q", resp.StatusCode, body)
	}
	waitFor(t, "the panic logged", func() bool { return strings.Contains(logs.String(), "panic in WriteRefusal") })
	c = dial(t, addr)
	c.Send("GET / HTTP/2.0\r\nHost: h\r\n\r\n")
	if resp, body := c.Response("GET"); resp.StatusCode != 505 || body != "short" {
		t.Errorf("505: %d %q", resp.StatusCode, body)
	}
	if err := receive(t, "the long write", tooLong); !errors.Is(err, serve.ErrRefusalTooLarge) {
		t.Errorf("a 17 KiB body: %v", err)
	}
}
