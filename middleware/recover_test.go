package middleware_test

import (
	"errors"
	"io"
	"testing"
	"time"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/core/coretest"
	"github.com/dwellhttp/dwell/middleware"
	"github.com/dwellhttp/dwell/wait"
)

// panicky panics before answering, in a continuation, or after its response started.
func panicky(c *core.Ctx) {
	c.SetHeader("X-Before", "kept")
	c.SetHeader("Content-Type", "image/png") // describes content the 500 does not carry
	switch c.Path() {
	case "/now":
		panic("boom")
	case "/later":
		wait.After(c, time.Millisecond, func(c *core.Ctx, err error) { panic("later") })
	case "/started":
		c.WriteString("partial")
		c.Flush()
		panic("mid-stream")
	}
}

// TestRecover: a panic, in the handler or its continuation, is answered 500 in the format
// chosen, with the fields set before it that do not describe content; a started response is
// cut, so that the client cannot take it for complete.
func TestRecover(t *testing.T) {
	cases := []struct {
		name   string
		answer middleware.ErrorFunc
		path   string
		ctype  string
		body   string
	}{
		{"text", nil, "/now", "text/plain; charset=utf-8", "500 Internal Server Error: internal server error\n"},
		{"json", middleware.JSONError, "/now", "application/json", `{"error":"internal server error"}` + "\n"},
		{"json in a continuation", middleware.JSONError, "/later", "application/json", `{"error":"internal server error"}` + "\n"},
		{"own", func(c *core.Ctx, status int, msg string) { c.SetStatus(status); c.WriteString("oops") }, "/later", "text/plain; charset=utf-8", "oops"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, addr := coretest.Serve(t, chain(panicky, middleware.Recover(tc.answer)), core.Options{})
			c := dialRaw(t, addr)
			c.Send("GET " + tc.path + " HTTP/1.1\r\nHost: h\r\n\r\n")
			resp, body := c.Response("GET")
			if resp.StatusCode != 500 || body != tc.body || resp.Header.Get("Content-Type") != tc.ctype ||
				resp.Header.Get("X-Before") != "kept" || !resp.Close {
				t.Fatalf("got %d %q %q", resp.StatusCode, resp.Header, body)
			}
		})
	}
	t.Run("started", func(t *testing.T) {
		_, addr := coretest.Serve(t, chain(panicky, middleware.Recover(middleware.JSONError)), core.Options{})
		c := dialRaw(t, addr)
		c.Send("GET /started HTTP/1.1\r\nHost: h\r\n\r\n")
		resp, err := readResponse(c)
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(resp.Body)
		if string(b) != "partial" || !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Fatalf("body %q, error %v: want the stream cut", b, err)
		}
	})
}
