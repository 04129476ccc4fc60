package middleware_test

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/core/coretest"
	"github.com/dwellhttp/dwell/middleware"
	"github.com/dwellhttp/dwell/wait"
)

// logged is the handler behind the access log tests.
func logged(c *core.Ctx) {
	switch c.Path() {
	case "/hello":
		c.WriteString("hello")
	case "/missing":
		c.SetStatus(404)
		c.WriteString("none")
	case "/limit":
		c.Seam().LimitBody(5)
		c.ReadBody(make([]byte, 10)) // the server answers 413
	case "/later":
		// Finished by a continuation, 300 ms later: the line says 202, and 300 ms or more.
		wait.After(c, 300*time.Millisecond, func(c *core.Ctx, err error) {
			c.SetStatus(202)
			c.WriteString("accepted")
		})
	case "/panic":
		panic("boom")
	case "/gone":
		wait.Sleep(c, time.Minute)
	}
}

// TestAccessLog: one line per response, saying what really went out — the server's own 413,
// a continuation's status and duration, a panic's 500 — with the request id, as JSON.
func TestAccessLog(t *testing.T) {
	logger, out := jsonLogger()
	_, addr := coretest.Serve(t, chain(logged, middleware.AssignRequestID, middleware.AccessLog(logger)), core.Options{})
	cases := []struct {
		name, req  string
		status     float64
		bytes      float64
		minElapsed time.Duration
		err        string
	}{
		{"hello", "GET /hello HTTP/1.1\r\nHost: h\r\nX-Request-Id: r1\r\n\r\n", 200, 5, 0, ""},
		{"head", "HEAD /hello HTTP/1.1\r\nHost: h\r\nX-Request-Id: r1\r\n\r\n", 200, 0, 0, ""},
		{"handler's 404", "GET /missing?secret=1 HTTP/1.1\r\nHost: h\r\nX-Request-Id: r1\r\n\r\n", 404, 4, 0, ""},
		{"server's 413", "POST /limit HTTP/1.1\r\nHost: h\r\nX-Request-Id: r1\r\nContent-Length: 10\r\n\r\n", 413, -1, 0, "dwell: request body too large"},
		{"continuation", "GET /later HTTP/1.1\r\nHost: h\r\nX-Request-Id: r1\r\n\r\n", 202, 8, 300 * time.Millisecond, ""},
		{"panic", "GET /panic HTTP/1.1\r\nHost: h\r\nX-Request-Id: r1\r\n\r\n", 500, -1, 0, "dwell: handler panicked: boom"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := dialRaw(t, addr)
			c.Send(tc.req)
			method, _, _ := strings.Cut(tc.req, " ")
			c.Response(method)
			m := out.nextJSON(t)
			path, _, _ := strings.Cut(strings.Fields(tc.req)[1], "?")
			if m["msg"] != "request" || m["level"] != "INFO" || m["method"] != method || m["path"] != path ||
				m["status"] != tc.status || m["request_id"] != "r1" {
				t.Fatalf("line %v", m)
			}
			if tc.bytes >= 0 && m["bytes"] != tc.bytes {
				t.Fatalf("bytes %v, want %v", m["bytes"], tc.bytes)
			}
			if d := time.Duration(m["duration"].(float64)); d < tc.minElapsed || d <= 0 {
				t.Fatalf("duration %v, want at least %v", d, tc.minElapsed)
			}
			if e, _ := m["error"].(string); e != tc.err {
				t.Fatalf("error %q, want %q", e, tc.err)
			}
		})
	}
	t.Run("client gone", func(t *testing.T) {
		c := dialRaw(t, addr)
		c.Send("GET /gone HTTP/1.1\r\nHost: h\r\n\r\n")
		c.Close()
		m := out.nextJSON(t)
		if m["path"] != "/gone" || m["error"] != core.ErrClosed.Error() {
			t.Fatalf("line %v", m)
		}
		if id, _ := m["request_id"].(string); len(id) != 36 {
			t.Fatalf("no new request id: %v", m)
		}
	})
}

// TestAccessLogText: the line's format is the handler's; an id assigned inside the access log
// is logged all the same.
func TestAccessLogText(t *testing.T) {
	out := make(lines, 4)
	logger := slog.New(slog.NewTextHandler(out, &slog.HandlerOptions{
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == "time" || a.Key == "duration" {
				return slog.Attr{}
			}
			return a
		},
	}))
	_, addr := coretest.Serve(t, chain(logged, middleware.AccessLog(logger), middleware.AssignRequestID), core.Options{})
	c := dialRaw(t, addr)
	c.Send("GET /hello HTTP/1.1\r\nHost: h\r\nX-Request-Id: t-1\r\n\r\n")
	c.Response("GET")
	want := "level=INFO msg=request method=GET path=/hello status=200 bytes=5 request_id=t-1\n"
	if got := out.next(t); string(got) != want {
		t.Fatalf("line %q, want %q", got, want)
	}
}

// TestAccessLogDisabled: a logger that drops Info records costs the request nothing and logs
// nothing.
func TestAccessLogDisabled(t *testing.T) {
	var buf bytes.Buffer
	logger := slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelWarn}))
	_, addr := coretest.Serve(t, chain(logged, middleware.AccessLog(logger)), core.Options{})
	c := dialRaw(t, addr)
	c.Send("GET /hello HTTP/1.1\r\nHost: h\r\n\r\nGET /hello HTTP/1.1\r\nHost: h\r\n\r\n")
	c.Response("GET")
	c.Response("GET") // the first one's hook, had there been one, ran before this answer
	if buf.Len() != 0 {
		t.Fatalf("logged %q", buf.String())
	}
}

// TestAccessLogReadsLateEitherOrder: the line of a request a continuation finishes has the
// request id whether AssignRequestID runs outside the access log or inside it, where the id is
// set only after the access log has passed the request on.
func TestAccessLogReadsLateEitherOrder(t *testing.T) {
	for _, idInside := range []bool{false, true} {
		logger, out := jsonLogger()
		mw := []func(core.Handler) core.Handler{middleware.AssignRequestID, middleware.AccessLog(logger)}
		if idInside {
			mw[0], mw[1] = mw[1], mw[0]
		}
		_, addr := coretest.Serve(t, chain(logged, mw...), core.Options{})
		c := dialRaw(t, addr)
		c.Send("GET /later HTTP/1.1\r\nHost: h\r\nX-Request-Id: r1\r\n\r\n")
		c.Response("GET")
		if m := out.nextJSON(t); m["request_id"] != "r1" || m["status"] != float64(202) {
			t.Errorf("id inside: %v: line %v", idInside, m)
		}
	}
}
