package oteldwell

import (
	"context"
	"errors"
	"sync"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/internal/labels"
)

// durationBuckets are the explicit bucket boundaries the semantic conventions advise for
// http.server.request.duration, in seconds.
var durationBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10}

// Metrics returns a middleware recording OpenTelemetry's stable HTTP server metrics, with o's
// meter provider:
//
//   - http.server.request.duration (s, a histogram with the bucket boundaries the semantic
//     conventions advise, 5 ms to 10 s): core.Done.Duration, from the request's head being
//     read to the response being queued whole for the client, waits and continuations
//     included;
//   - http.server.active_requests ({request}, an UpDownCounter): the requests whose handler
//     has started and whose response has not ended;
//   - http.server.request.body.size (By, a histogram): the request's Content-Length, 0 for a
//     request without a body; not recorded for a body of no declared length (chunked, or an
//     HTTP/2 one without content-length), whose size the core does not report;
//   - http.server.response.body.size (By, a histogram): core.Done.Bytes, the body bytes sent
//     after any body filter (compression), 0 for HEAD.
//
// Their attributes are http.request.method (the method, or "_OTHER" for one the semantic
// conventions do not list, so that clients cannot grow it) and url.scheme; the three
// histograms also have http.response.status_code, http.route — the route pattern
// (core.Ctx.Route), set only when a route matched, so that the router's own 404s, 405s and
// redirects carry none, as the conventions ask — and error.type for a response that failed: the
// kind of core.Done.Err ("client_closed", "shutdown", "deadline_exceeded", "timeout",
// "body_too_large", "body_truncated", "aborted", "panic", else "_OTHER"), or the status code of
// a 5xx.
//
// Requests the server refuses before any handler runs (a malformed head, a 431) never reach
// a middleware: ObserveServer counts them.
//
// The middleware records on the request's loop, in the response's OnDone hook. Each attribute
// set is made once per combination and kept, so that a request costs the middleware no
// allocation of its own; the meter's recording may allocate (the SDK's does not, exemplars of
// a sampled span included; see TestAllocsPerRequest). Inside Tracing, the measurements are made
// with the request's span, for the exemplars. The error is the meter's, for an instrument it
// could not make.
func Metrics(o Options) (func(core.Handler) core.Handler, error) {
	m, err := newMetrics(o.meter())
	if err != nil {
		return nil, err
	}
	return m.wrap, nil
}

// metrics holds a Metrics middleware's instruments and the attribute sets it has made.
type metrics struct {
	duration          metric.Float64Histogram
	reqSize, respSize metric.Int64Histogram
	active            metric.Int64UpDownCounter

	sets    *labels.Cache[setKey, []metric.RecordOption] // the histograms' attributes
	actives *labels.Cache[activeKey, []metric.AddOption] // active_requests' attributes
}

// A setKey is what the histograms' attributes are made of.
type setKey struct {
	method, route, scheme, errType string
	status                         int
}

// An activeKey is what http.server.active_requests' attributes are made of: only what is
// known when the request starts.
type activeKey struct{ method, scheme string }

func newMetrics(meter metric.Meter) (*metrics, error) {
	m := &metrics{
		sets:    labels.New(makeSet, 0),
		actives: labels.New(makeActiveSet, 0),
	}
	var err, e error
	m.duration, e = meter.Float64Histogram("http.server.request.duration",
		metric.WithDescription("Duration of HTTP server requests."),
		metric.WithUnit("s"),
		metric.WithExplicitBucketBoundaries(durationBuckets...))
	err = errors.Join(err, e)
	m.active, e = meter.Int64UpDownCounter("http.server.active_requests",
		metric.WithDescription("Number of active HTTP server requests."),
		metric.WithUnit("{request}"))
	err = errors.Join(err, e)
	m.reqSize, e = meter.Int64Histogram("http.server.request.body.size",
		metric.WithDescription("Size of HTTP server request bodies."),
		metric.WithUnit("By"))
	err = errors.Join(err, e)
	m.respSize, e = meter.Int64Histogram("http.server.response.body.size",
		metric.WithDescription("Size of HTTP server response bodies."),
		metric.WithUnit("By"))
	err = errors.Join(err, e)
	if err != nil {
		return nil, err
	}
	return m, nil
}

func makeSet(k setKey) []metric.RecordOption {
	kvs := make([]attribute.KeyValue, 0, 5)
	kvs = append(kvs, semconv.HTTPRequestMethodKey.String(k.method), semconv.URLSchemeKey.String(k.scheme))
	if k.status != 0 {
		kvs = append(kvs, semconv.HTTPResponseStatusCodeKey.Int(k.status))
	}
	if k.route != "" {
		kvs = append(kvs, semconv.HTTPRouteKey.String(k.route))
	}
	if k.errType != "" {
		kvs = append(kvs, semconv.ErrorTypeKey.String(k.errType))
	}
	return []metric.RecordOption{metric.WithAttributeSet(attribute.NewSet(kvs...))}
}

func makeActiveSet(k activeKey) []metric.AddOption {
	set := attribute.NewSet(semconv.HTTPRequestMethodKey.String(k.method), semconv.URLSchemeKey.String(k.scheme))
	return []metric.AddOption{metric.WithAttributeSet(set)}
}

func (m *metrics) wrap(next core.Handler) core.Handler {
	return func(c *core.Ctx) {
		e := metricsEntries.Get().(*metricsEntry)
		e.m = m
		e.method, e.scheme, e.route = labels.Method(c.Method()), c.Scheme(), c.Route()
		e.reqSize = requestSize(c)
		e.ctx = spanContextOf(c)
		e.active = m.actives.Get(activeKey{e.method, e.scheme})
		m.active.Add(orBackground(e.ctx), 1, e.active...)
		c.OnDone(e.done)
		defer e.learnLate(c)
		next(c)
	}
}

// learnLate takes what a middleware around the router's Handler, rather than in its Use,
// learns only once the handler has returned, or panicked: the route, and the span of a Tracing
// inside it. The hook has not run yet: it runs once the handler, of which this middleware is a
// part, has returned.
func (e *metricsEntry) learnLate(c *core.Ctx) {
	if e.route == "" {
		e.route = c.Route()
	}
	if e.ctx == nil {
		e.ctx = spanContextOf(c)
	}
}

// requestSize returns what http.server.request.body.size records for c's request: its
// Content-Length, 0 when it has no body, -1 (nothing recorded) for a body of no declared
// length (chunked, or an HTTP/2 one without content-length), whose size the core does not
// report. Called before the handler reads anything: BodyDone then says there is no body.
func requestSize(c *core.Ctx) int64 {
	if n := c.ContentLength(); n >= 0 {
		return n
	}
	if c.Seam().Chunked() || !c.Seam().BodyDone() {
		return -1
	}
	return 0
}

// A metricsEntry is what a request's measurements need from the request, captured while its
// handler runs. Entries are pooled, each with its hook made once, so that a request costs no
// closure.
type metricsEntry struct {
	m                     *metrics
	method, scheme, route string
	reqSize               int64
	ctx                   context.Context // the request's span (for exemplars), or nil
	active                []metric.AddOption
	done                  func(core.Done) // e.record
}

var metricsEntries sync.Pool

func init() {
	metricsEntries.New = func() any {
		e := new(metricsEntry)
		e.done = e.record
		return e
	}
}

// record records the finished response and puts the entry back in the pool.
func (e *metricsEntry) record(d core.Done) {
	m, ctx := e.m, orBackground(e.ctx)
	opts := m.sets.Get(setKey{method: e.method, route: e.route, scheme: e.scheme, errType: errorType(d), status: d.Status})
	m.duration.Record(ctx, d.Duration.Seconds(), opts...)
	if e.reqSize >= 0 {
		m.reqSize.Record(ctx, e.reqSize, opts...)
	}
	m.respSize.Record(ctx, d.Bytes, opts...)
	m.active.Add(ctx, -1, e.active...)
	*e = metricsEntry{done: e.done}
	metricsEntries.Put(e)
}

func orBackground(ctx context.Context) context.Context {
	if ctx == nil {
		return context.Background()
	}
	return ctx
}
