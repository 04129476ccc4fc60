package middleware_test

import (
	"log/slog"
	"testing"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/core/coretest"
	"github.com/dwellhttp/dwell/middleware"
	"github.com/dwellhttp/dwell/router"
)

// TestAccessLogFields: the route on every line a router served (its own 404 and 405
// included), the fields asked for, and what the application added.
func TestAccessLogFields(t *testing.T) {
	logger, out := jsonLogger()
	r := router.New()
	r.Use(middleware.AccessLog(logger, middleware.LogRemoteAddr, middleware.LogUserAgent,
		middleware.LogReferer, middleware.LogRequestBytes, middleware.LogTraceID, middleware.LogHost))
	r.POST("/todos/:id", func(c *core.Ctx) {
		middleware.SetTraceID(c, "4bf92f3577b34da6a3ce929d0e0e4736")
		middleware.AddLogAttrs(c, slog.String("user", "ann"))
		middleware.AddLogAttrs(c, slog.Int("tenant", 7))
		c.WriteString("ok")
	})
	_, addr := coretest.Serve(t, r.Handler(), core.Options{})

	c := dialRaw(t, addr)
	c.Send("POST /todos/12 HTTP/1.1\r\nHost: todo.example\r\nUser-Agent: probe/1\r\nReferer: https://a.example/\r\nContent-Length: 3\r\n\r\nabc")
	c.Response("POST")
	m := out.nextJSON(t)
	want := map[string]any{
		"route": "/todos/:id", "path": "/todos/12", "remote_addr": "127.0.0.1", "user_agent": "probe/1",
		"referer": "https://a.example/", "request_bytes": 3.0, "trace_id": "4bf92f3577b34da6a3ce929d0e0e4736",
		"host": "todo.example", "user": "ann", "tenant": 7.0,
	}
	for k, v := range want {
		if m[k] != v {
			t.Errorf("%s = %v, want %v (line %v)", k, m[k], v, m)
		}
	}

	for _, tc := range []struct{ req, route string }{
		{"GET /nowhere HTTP/1.1\r\nHost: h\r\n\r\n", router.LabelNotFound},
		{"GET /todos/12 HTTP/1.1\r\nHost: h\r\n\r\n", router.LabelMethodNotAllowed},
	} {
		c.Send(tc.req)
		c.Response("GET")
		m := out.nextJSON(t)
		if m["route"] != tc.route {
			t.Errorf("%q: route %v, want %q", tc.req, m["route"], tc.route)
		}
		for _, k := range []string{"user_agent", "referer", "request_bytes", "trace_id", "user"} {
			if v, ok := m[k]; ok {
				t.Errorf("%q: %s = %v on a request without it", tc.req, k, v)
			}
		}
	}
}
