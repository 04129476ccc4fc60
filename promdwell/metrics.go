package promdwell

import (
	"slices"
	"sync"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/internal/labels"
	"github.com/prometheus/client_golang/prometheus"
)

// DurationBuckets are the bucket boundaries of http_server_request_duration_seconds, in
// seconds: those OpenTelemetry's semantic conventions advise for http.server.request.duration.
var DurationBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10}

// SizeBuckets are the bucket boundaries of the body size histograms, in bytes: powers of 4
// from 64 bytes to 16 MiB.
var SizeBuckets = prometheus.ExponentialBuckets(64, 4, 10)

// Metrics records the HTTP server metrics of every request its middleware sees (see the
// package documentation). It is a prometheus.Collector of them.
type Metrics struct {
	descs   metricDescs
	bounds  seriesBounds
	series  *seriesSet
	active  [labels.Methods][2]activeCount // by method and scheme, see activeIndex
	entries sync.Pool
}

type metricDescs struct {
	duration, requestSize, responseSize, active *prometheus.Desc
}

// The labels of the request metrics.
var requestLabels = []string{"http_request_method", "http_route", "http_response_status_code", "url_scheme"}

// NewMetrics makes the request metrics and registers them with reg (nil: none, for a
// registry the caller registers the returned Metrics with itself).
// It panics if reg refuses them, as prometheus.MustRegister does. DurationBuckets and
// SizeBuckets are read now: changing them later changes no Metrics made before.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		descs: metricDescs{
			duration: prometheus.NewDesc("http_server_request_duration_seconds",
				"Duration of HTTP server requests, from the head read to the response queued whole.", requestLabels, nil),
			requestSize: prometheus.NewDesc("http_server_request_body_size_bytes",
				"Size of HTTP server request bodies, as their Content-Length declared (chunked bodies are not observed).", requestLabels, nil),
			responseSize: prometheus.NewDesc("http_server_response_body_size_bytes",
				"Size of HTTP server response bodies, the bytes sent.", requestLabels, nil),
			active: prometheus.NewDesc("http_server_active_requests",
				"Number of HTTP server requests in flight: read, and not answered whole yet.",
				[]string{"http_request_method", "url_scheme"}, nil),
		},
		bounds: seriesBounds{
			duration:  scaledBounds(DurationBuckets, 1e9), // nanoseconds
			size:      scaledBounds(SizeBuckets, 1),
			durationS: slices.Clone(DurationBuckets),
			sizeB:     slices.Clone(SizeBuckets),
		},
	}
	m.series = newSeriesSet(&m.bounds)
	m.entries.New = func() any {
		e := &entry{m: m}
		e.done = e.record
		return e
	}
	if reg != nil {
		reg.MustRegister(m)
	}
	return m
}

// Middleware records the metrics of each request it passes to next, once its response is
// complete (core.Ctx.OnDone): for a router, put it in Router.Use, so that the router's own
// answers are counted under their labels too.
func (m *Metrics) Middleware(next core.Handler) core.Handler {
	return func(c *core.Ctx) {
		e := m.entries.Get().(*entry)
		e.method = uint8(labels.MethodIndex(c.Method()))
		e.https = c.Scheme() == "https"
		e.requestSize = c.ContentLength()
		if e.requestSize < 0 && !c.Seam().Chunked() && c.Seam().BodyDone() {
			e.requestSize = 0 // no body (before the handler reads, BodyDone says so)
		}
		e.active = &m.active[e.method][b2i(e.https)]
		e.active.add(1)
		c.OnDone(e.done)
		// The route is read once the handler returns, or panics: a router this middleware
		// wraps labels the request only then.
		defer e.setRoute(c)
		next(c)
	}
}

// An entry is what recording a request needs once its values are gone. Entries are pooled,
// each with its hook made once, so that recording costs no closure.
type entry struct {
	m           *Metrics
	route       string
	method      uint8 // labels.MethodIndex
	https       bool
	requestSize int64
	active      *activeCount
	done        func(core.Done) // e.record
}

func (e *entry) setRoute(c *core.Ctx) { e.route = c.Seam().RouteLabel() }

func (e *entry) record(d core.Done) {
	m := e.m
	s := m.series.get(e.method, e.route, e.https, d.Status)
	s.duration.observe(int64(d.Duration), m.bounds.duration)
	if e.requestSize >= 0 {
		s.requestSize.observe(e.requestSize, m.bounds.size)
	}
	s.responseSize.observe(d.Bytes, m.bounds.size)
	e.active.add(-1)
	*e = entry{m: m, done: e.done}
	m.entries.Put(e)
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
