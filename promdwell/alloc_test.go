//go:build !race && linux && !dwell_portable

package promdwell_test

import (
	"testing"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/core/coretest"
	"github.com/dwellhttp/dwell/promdwell"
	"github.com/dwellhttp/dwell/router"
	"github.com/prometheus/client_golang/prometheus"
)

// TestAllocsPerRequest: recording a request's metrics allocates nothing once its labels have
// been seen: a request through the middleware allocates what it does without (nothing for a
// static route, httprouter's parameter slice for a route with a parameter).
func TestAllocsPerRequest(t *testing.T) {
	allocs := func(withMetrics bool, path string) float64 {
		r := router.New()
		if withMetrics {
			r.Use(promdwell.NewMetrics(prometheus.NewRegistry()).Middleware)
		}
		h := func(c *core.Ctx) { c.WriteString("{}") }
		r.GET("/todos", h)
		r.GET("/todos/:id", h)
		_, addr := coretest.Serve(t, r.Handler(), core.Options{})
		rt := coretest.NewRoundTripper(t, addr, "GET "+path+" HTTP/1.1\r\nHost: h\r\n\r\n")
		for range 100 {
			rt.Do(t)
		}
		return testing.AllocsPerRun(1000, func() { rt.Do(t) })
	}
	for _, path := range []string{"/todos", "/todos/7"} {
		without, with := allocs(false, path), allocs(true, path)
		t.Logf("%s: %.2f allocations per request, %.2f with the metrics", path, without, with)
		if with != without {
			t.Errorf("%s: %.2f allocations per request with the metrics, %.2f without", path, with, without)
		}
	}
}
