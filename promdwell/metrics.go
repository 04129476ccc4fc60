package promdwell

import (
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
// package documentation).
type Metrics struct {
	duration, requestSize, responseSize *prometheus.HistogramVec
	active                              *prometheus.GaugeVec
	series                              *labels.Cache[seriesKey, *series]
	activeSeries                        *labels.Cache[activeKey, prometheus.Gauge]
	entries                             sync.Pool
}

// The labels of the request metrics.
var requestLabels = []string{"http_request_method", "http_route", "http_response_status_code", "url_scheme"}

// NewMetrics makes the request metrics and registers them with reg (nil: none, for a
// registry the caller registers the returned value's collectors with itself, see Collectors).
// It panics if reg refuses them, as prometheus.MustRegister does.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "http_server_request_duration_seconds",
			Help:    "Duration of HTTP server requests, from the head read to the response queued whole.",
			Buckets: DurationBuckets,
		}, requestLabels),
		requestSize: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "http_server_request_body_size_bytes",
			Help:    "Size of HTTP server request bodies, as their Content-Length declared (chunked bodies are not observed).",
			Buckets: SizeBuckets,
		}, requestLabels),
		responseSize: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "http_server_response_body_size_bytes",
			Help:    "Size of HTTP server response bodies, the bytes sent.",
			Buckets: SizeBuckets,
		}, requestLabels),
		active: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "http_server_active_requests",
			Help: "Number of HTTP server requests in flight: read, and not answered whole yet.",
		}, []string{"http_request_method", "url_scheme"}),
	}
	m.series = labels.New(m.newSeries, 0)
	m.activeSeries = labels.New(func(k activeKey) prometheus.Gauge { return m.active.WithLabelValues(k.method, k.scheme) }, 0)
	m.entries.New = func() any {
		e := &entry{m: m}
		e.done = e.record
		return e
	}
	if reg != nil {
		reg.MustRegister(m.Collectors()...)
	}
	return m
}

// Collectors returns the metrics' collectors, for a registry of the caller's.
func (m *Metrics) Collectors() []prometheus.Collector {
	return []prometheus.Collector{m.duration, m.requestSize, m.responseSize, m.active}
}

func (m *Metrics) newSeries(k seriesKey) *series {
	lv := []string{k.method, k.route, statusText(k.status), k.scheme}
	return &series{
		duration:     m.duration.WithLabelValues(lv...),
		requestSize:  m.requestSize.WithLabelValues(lv...),
		responseSize: m.responseSize.WithLabelValues(lv...),
	}
}

type activeKey struct{ method, scheme string }

func (m *Metrics) activeGauge(method, scheme string) prometheus.Gauge {
	return m.activeSeries.Get(activeKey{method, scheme})
}

// Middleware records the metrics of each request it passes to next, once its response is
// complete (core.Ctx.OnDone): for a router, put it in Router.Use, so that the router's own
// answers are counted under their labels too.
func (m *Metrics) Middleware(next core.Handler) core.Handler {
	return func(c *core.Ctx) {
		e := m.entries.Get().(*entry)
		e.method, e.scheme = labels.Method(c.Method()), c.Scheme()
		e.route = c.RouteLabel() // set by the router before its middleware; read again below
		e.requestSize = c.ContentLength()
		if e.requestSize < 0 && !c.Chunked() {
			e.requestSize = 0 // no body
		}
		e.active = m.activeGauge(e.method, e.scheme)
		e.active.Inc()
		c.OnDone(e.done)
		next(c)
		// A router this middleware wraps labels the request only now (a panic skips this:
		// the label read before stays).
		e.route = c.RouteLabel()
	}
}

// An entry is what recording a request needs once its values are gone. Entries are pooled,
// each with its hook made once, so that recording costs no closure.
type entry struct {
	m             *Metrics
	method, route string
	scheme        string
	requestSize   int64
	active        prometheus.Gauge
	done          func(core.Done) // e.record
}

func (e *entry) record(d core.Done) {
	s := e.m.series.Get(seriesKey{e.method, e.route, e.scheme, d.Status})
	s.duration.Observe(d.Duration.Seconds())
	if e.requestSize >= 0 {
		s.requestSize.Observe(float64(e.requestSize))
	}
	s.responseSize.Observe(float64(d.Bytes))
	e.active.Dec()
	m := e.m
	*e = entry{m: m, done: e.done}
	m.entries.Put(e)
}
