//go:build !race && linux && !dwell_portable

package middleware_test

import (
	"testing"
	"time"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/core/coretest"
	"github.com/dwellhttp/dwell/middleware"
)

// TestRateLimitAllocs: a request whose key has been seen costs no allocation, its key the
// client's address or a field borrowed from the request, the RateLimit fields included.
func TestRateLimitAllocs(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    middleware.RateLimitOptions
		req  string
	}{
		{"client address", middleware.RateLimitOptions{Rate: 100_000_000}, ""},
		{"borrowed key", middleware.RateLimitOptions{Rate: 100_000_000, Key: func(c *core.Ctx) []byte { v, _ := c.Bytes().Header("Authorization"); return v }},
			"Authorization: Bearer abc\r\n"},
		{"long name", middleware.RateLimitOptions{Rate: 100_000_000, Name: "writes per client address, a name of 48 bytes"}, ""},
		{"wide fields", middleware.RateLimitOptions{Rate: 1_000_000, Period: 100 * 24 * time.Hour}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, addr := coretest.Serve(t, middleware.RateLimit(tc.o)(hello), core.Options{})
			rt := coretest.NewRoundTripper(t, addr, "GET /hello HTTP/1.1\r\nHost: h\r\n"+tc.req+"\r\n")
			for range 100 {
				rt.Do(t)
			}
			if got := testing.AllocsPerRun(1000, func() { rt.Do(t) }); got != 0 {
				t.Fatalf("%.2f allocations per request, want 0", got)
			}
		})
	}
}
