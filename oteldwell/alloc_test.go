//go:build !race && linux && !dwell_portable

package oteldwell_test

import (
	"testing"

	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/core/coretest"
	"github.com/dwellhttp/dwell/oteldwell"
	"github.com/dwellhttp/dwell/router"
)

// TestAllocsPerRequest: the allocations a request costs with each middleware, counted over
// kept-alive exchanges whose client allocates nothing, on a route with a parameter, for which
// the router allocates one (httprouter's parameter slice).
//
// Metrics adds nothing, with the SDK's meter (a ManualReader) as with the no-op one: its
// attribute sets are made once per combination, its entry is pooled, and the SDK records a
// measurement made with a premade set without allocating — exemplars included, when a sampled
// span is in the request's values. Tracing adds what the span's context and attributes cost:
// with the no-op provider seven allocations (the attribute slice and the option boxing it, the
// strings of url.path, server.address and network.peer.address, and the request value's two
// contexts; the value itself is kept in the Ctx); with the SDK's span, 20 in all as measured
// with otel v1.47.0 (not checked: they are the SDK's), and as many with Metrics inside it too.
func TestAllocsPerRequest(t *testing.T) {
	sdkMetrics := func() func(core.Handler) core.Handler {
		mp, _ := newMeter()
		mw, err := oteldwell.Metrics(oteldwell.Options{MeterProvider: mp})
		if err != nil {
			t.Fatal(err)
		}
		return mw
	}
	noopMetrics, err := oteldwell.Metrics(oteldwell.Options{MeterProvider: metricnoop.NewMeterProvider()})
	if err != nil {
		t.Fatal(err)
	}
	tc := propagation.TraceContext{}
	noopTracing := oteldwell.Tracing(oteldwell.Options{TracerProvider: tracenoop.NewTracerProvider(), Propagators: tc})
	sdkTracing := func() func(core.Handler) core.Handler {
		tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(tracetest.NewSpanRecorder()))
		return oteldwell.Tracing(oteldwell.Options{TracerProvider: tp, Propagators: tc})
	}
	const routing = 1 // the router's parameter slice
	cases := []struct {
		name string
		mw   []func(core.Handler) core.Handler
		// want is the exact count, or -1 to report the count without checking it: the SDK's
		// spans allocate what its version does.
		want float64
	}{
		{"none", nil, routing},
		{"metrics, SDK", []func(core.Handler) core.Handler{sdkMetrics()}, routing},
		{"metrics, no-op", []func(core.Handler) core.Handler{noopMetrics}, routing},
		{"tracing, no-op", []func(core.Handler) core.Handler{noopTracing}, routing + 7},
		{"tracing, SDK", []func(core.Handler) core.Handler{sdkTracing()}, -1},
		{"tracing and metrics, SDK", []func(core.Handler) core.Handler{sdkTracing(), sdkMetrics()}, -1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := router.New()
			r.Use(tc.mw...)
			r.GET("/todos/:id", func(c *core.Ctx) { c.WriteString("todo") })
			_, addr := coretest.Serve(t, r.Handler(), core.Options{})
			rt := coretest.NewRoundTripper(t, addr, "GET /todos/1 HTTP/1.1\r\nHost: h\r\n\r\n")
			for range 100 {
				rt.Do(t)
			}
			got := testing.AllocsPerRun(1000, func() { rt.Do(t) })
			t.Logf("%s: %.2f allocations per request", tc.name, got)
			if tc.want >= 0 && got != tc.want {
				t.Fatalf("%.2f allocations per request, want %.0f", got, tc.want)
			}
		})
	}
}
