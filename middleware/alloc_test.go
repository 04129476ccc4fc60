//go:build !race && linux && !dwell_portable

package middleware_test

import (
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/core/coretest"
	"github.com/dwellhttp/dwell/middleware"
)

func hello(c *core.Ctx) {
	c.SetHeader("Content-Type", "text/plain")
	c.WriteString("Hello World")
}

// TestAllocsPerRequest: the allocations each middleware adds to a request, counted over
// kept-alive exchanges whose client allocates nothing. Most add none; the access log pays for
// the path it keeps and slog's record, a given request id for its copy.
func TestAllocsPerRequest(t *testing.T) {
	logger := slog.New(slog.NewJSONHandler(io.Discard, nil))
	fast := slog.New(middleware.NewLogHandler(io.Discard, nil))
	cases := []struct {
		name   string
		mw     []func(core.Handler) core.Handler
		req    string
		allocs float64
	}{
		{"none", nil, "", 0},
		{"recover", []func(core.Handler) core.Handler{middleware.Recover(middleware.JSONError)}, "", 0},
		{"timeout", []func(core.Handler) core.Handler{middleware.Timeout(time.Minute)}, "", 0},
		{"body limit", []func(core.Handler) core.Handler{middleware.BodyLimit(1 << 20)}, "", 0},
		{"cors, no origin", []func(core.Handler) core.Handler{middleware.CORS(middleware.CORSOptions{Origins: []string{"https://a.example"}})}, "", 0},
		// A body under MinSize goes as it is before its Content-Type is read (a copy).
		{"compress, small", []func(core.Handler) core.Handler{middleware.Compress(middleware.CompressOptions{})}, "Accept-Encoding: gzip\r\n", 0},
		// The path, kept for the line; slog's record holds five attributes without allocating.
		{"access log", []func(core.Handler) core.Handler{middleware.AccessLog(logger)}, "", 1},
		// On a LogHandler the line is written without slog's record, the path copied into the
		// pooled entry's array.
		{"access log, LogHandler", []func(core.Handler) core.Handler{middleware.AccessLog(fast)}, "", 0},
		// A new id's bytes and the string header its interface points at are one of a block's
		// 32, an allocation every 32 requests, which rounds to none; the request value is
		// inline in the Ctx.
		{"request id", []func(core.Handler) core.Handler{middleware.AssignRequestID}, "", 0},
		// A given id is copied, with its string header, into an object of its own.
		{"request id given", []func(core.Handler) core.Handler{middleware.AssignRequestID}, "X-Request-Id: abc\r\n", 1},
		// The access log, with a sixth attribute past the five slog keeps in its record, and
		// the id.
		{"id, log, recover", []func(core.Handler) core.Handler{middleware.AssignRequestID, middleware.AccessLog(logger), middleware.Recover(nil)}, "", 2},
		// On a LogHandler: what a service that logs every request pays.
		{"id, LogHandler, recover", []func(core.Handler) core.Handler{middleware.AssignRequestID, middleware.AccessLog(fast), middleware.Recover(nil)}, "", 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, addr := coretest.Serve(t, chain(hello, tc.mw...), core.Options{})
			rt := coretest.NewRoundTripper(t, addr, "GET /hello HTTP/1.1\r\nHost: h\r\n"+tc.req+"\r\n")
			for range 100 {
				rt.Do(t)
			}
			got := testing.AllocsPerRun(1000, func() { rt.Do(t) })
			t.Logf("%s: %.2f allocations per request", tc.name, got)
			if got != tc.allocs {
				t.Fatalf("%.2f allocations per request, want %.0f", got, tc.allocs)
			}
		})
	}
}
