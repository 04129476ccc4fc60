package oteldwell

import (
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// ScopeName is the instrumentation scope of the meters and tracers this package makes, for
// views and filters that select its instruments or spans.
const ScopeName = "github.com/dwellhttp/dwell/oteldwell"

// Options says where the middlewares and ObserveServer report. Each field left nil is
// OpenTelemetry's global one, read when the middleware or registration is made (the global
// providers delegate to the program's once it sets them, so the order does not matter).
type Options struct {
	// MeterProvider makes the meter of Metrics and ObserveServer; nil is otel.GetMeterProvider().
	MeterProvider metric.MeterProvider
	// TracerProvider makes the tracer of Tracing; nil is otel.GetTracerProvider().
	TracerProvider trace.TracerProvider
	// Propagators reads the caller's trace context from the request's header fields; nil is
	// otel.GetTextMapPropagator(). Set it to propagation.TraceContext{} (with
	// propagation.Baggage{} if wanted) for W3C Trace Context when the program sets no global.
	Propagators propagation.TextMapPropagator
}

func (o Options) meter() metric.Meter {
	mp := o.MeterProvider
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	return mp.Meter(ScopeName)
}

func (o Options) tracer() trace.Tracer {
	tp := o.TracerProvider
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	return tp.Tracer(ScopeName)
}

func (o Options) propagators() propagation.TextMapPropagator {
	if o.Propagators == nil {
		return otel.GetTextMapPropagator()
	}
	return o.Propagators
}
