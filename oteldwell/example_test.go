package oteldwell_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"

	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/middleware"
	"github.com/dwellhttp/dwell/oteldwell"
	"github.com/dwellhttp/dwell/router"
)

// The usual setup: the server's own statistics, then spans and metrics for every request,
// routes and the router's own answers alike, around the access log. A program would give the
// providers an exporter (OTLP, Prometheus) and set them globally with otel.SetMeterProvider,
// otel.SetTracerProvider and otel.SetTextMapPropagator, leaving Options empty; here a
// ManualReader and a SpanRecorder show what they receive.
func Example() {
	reader := sdkmetric.NewManualReader()
	spans := tracetest.NewSpanRecorder()
	o := oteldwell.Options{
		MeterProvider:  sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)),
		TracerProvider: sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans)),
		Propagators:    propagation.TraceContext{},
	}
	metrics, err := oteldwell.Metrics(o)
	if err != nil {
		panic(err)
	}

	r := router.New()
	r.Use(
		oteldwell.Tracing(o), // first, so that the others see the span and the trace id
		metrics,
		middleware.AccessLog(slog.New(slog.NewTextHandler(io.Discard, nil))),
	)
	r.GET("/todos/:id", func(c *core.Ctx) {
		// The handler's own spans, and outgoing requests, continue the request's trace: the
		// span is in c.Context() (and oteldwell.Span(c)).
		oteldwell.Span(c).AddEvent("todo looked up")
		c.WriteString("todo " + c.Param("id"))
	})

	s := core.NewServer(r.Handler(), core.Options{Addr: "127.0.0.1:0"})
	if err := s.Listen(); err != nil {
		panic(err)
	}
	reg, err := oteldwell.ObserveServer(s, o)
	if err != nil {
		panic(err)
	}
	defer reg.Unregister()
	go s.ListenAndServe()

	for _, path := range []string{"/todos/1", "/todos/2", "/nowhere"} {
		resp, err := http.Get("http://" + s.Addr().String() + path)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	s.Shutdown(context.Background()) // once it returns, every response has been recorded

	for _, span := range spans.Ended() {
		fmt.Println("span:", span.Name(), len(span.Events()), "event(s)")
	}
	var rm metricdata.ResourceMetrics
	reader.Collect(context.Background(), &rm)
	for _, m := range rm.ScopeMetrics[0].Metrics {
		switch data := m.Data.(type) {
		case metricdata.Histogram[float64]:
			for _, dp := range data.DataPoints {
				route, _ := dp.Attributes.Value("http.route")
				status, _ := dp.Attributes.Value("http.response.status_code")
				fmt.Printf("%s: %d, route %q, status %d\n", m.Name, dp.Count, route.AsString(), status.AsInt64())
			}
		case metricdata.Sum[int64]:
			if m.Name == "dwell.server.requests" {
				fmt.Printf("%s: %d\n", m.Name, data.DataPoints[0].Value)
			}
		}
	}
	// Unordered output:
	// span: GET /todos/:id 1 event(s)
	// span: GET /todos/:id 1 event(s)
	// span: GET 0 event(s)
	// http.server.request.duration: 2, route "/todos/:id", status 200
	// http.server.request.duration: 1, route "", status 404
	// dwell.server.requests: 3
}
