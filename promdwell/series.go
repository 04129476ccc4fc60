package promdwell

import (
	"math"
	"sync/atomic"

	"github.com/dwellhttp/dwell/internal/alias"
	"github.com/dwellhttp/dwell/internal/labels"
	"github.com/prometheus/client_golang/prometheus"
)

// The request metrics are recorded here rather than in client_golang's HistogramVec and GaugeVec,
// whose every observation takes several atomic operations (a hot and a cold copy of each count, so
// that a scrape reads a consistent one, and a compare-and-swap loop for the float sum) after a
// lookup by label values. A request here costs one lookup by its labels, and per histogram two
// atomic additions, to its bucket's count and to its sum, kept in integers (nanoseconds, bytes). A
// scrape reads each count once: a histogram's count is the sum of its buckets', so the two always
// agree, and its sum may be a request ahead or behind them, as a sum read beside concurrent
// observations may be in any exporter.

// A histogram is one series's counts by bucket, the last for the observations above every
// bound, and the sum of what it observed.
type histogram struct {
	counts []atomic.Uint64
	sum    atomic.Int64
}

// observe counts v in the first bucket whose bound it does not exceed (Prometheus's "le").
func (h *histogram) observe(v int64, bounds []int64) {
	i := 0
	for i < len(bounds) && v > bounds[i] { // most observations fall in the first buckets
		i++
	}
	h.counts[i].Add(1)
	if v != 0 { // a request without a body, most of them: one atomic operation fewer
		h.sum.Add(v)
	}
}

// constMetric returns the histogram as client_golang's, with its sum in scale units of a base
// unit.
func (h *histogram) constMetric(desc *prometheus.Desc, bounds []float64, scale float64, lv []string) prometheus.Metric {
	cum := make(map[float64]uint64, len(bounds))
	var n uint64
	for i, b := range bounds {
		n += h.counts[i].Load()
		cum[b] = n
	}
	n += h.counts[len(bounds)].Load()
	return prometheus.MustNewConstHistogram(desc, n, float64(h.sum.Load())*scale, cum, lv...)
}

// seriesBounds are the histograms' bucket bounds: in their integer units, for recording, and as
// the buckets were given, for the exposition.
type seriesBounds struct {
	duration, size   []int64
	durationS, sizeB []float64 // seconds, bytes
}

// scaledBounds returns bounds in units of 1/scale of theirs, rounded.
func scaledBounds(bounds []float64, scale float64) []int64 {
	out := make([]int64, len(bounds))
	for i, b := range bounds {
		out[i] = int64(math.Round(b * scale))
	}
	return out
}

// A series is what one combination of labels records into.
type series struct {
	key                                 seriesKey
	duration, requestSize, responseSize histogram
}

// seriesKey is a combination of labels.
type seriesKey struct {
	route  string
	status int
	method uint8 // labels.MethodIndex
	https  bool
}

// A seriesSet holds every series, in a labels.Cache: found without a lock, made once. The
// labels are bounded — the method among the labels.Methods, the route a pattern of the
// router's or one of its labels, the status among 900 codes, the scheme http or https — so the
// set keeps every series it makes, past labels.Max too: a series made and not kept would lose
// its requests from the exposition.
type seriesSet struct {
	bounds *seriesBounds
	all    *labels.Cache[seriesKey, *series]
	// recent finds a series without hashing its route: a route label is a pattern the router
	// keeps or one of its label constants, so a route's requests bring the same string, the
	// same bytes at the same address, and a slot matches on the address and the length. A match
	// means the same bytes, because the slot's series holds its route string: while a slot can
	// match, the bytes it compares with cannot be freed and reused for another string. Only
	// addresses are compared; no pointer is made from one.
	recent [64]atomic.Pointer[series]
}

func newSeriesSet(bounds *seriesBounds) *seriesSet {
	ss := &seriesSet{bounds: bounds}
	ss.all = labels.New(ss.newSeries, math.MaxInt)
	return ss
}

// get returns the series of a request's labels, made the first time.
func (ss *seriesSet) get(method uint8, route string, https bool, status int) *series {
	p := alias.StringAddr(route)
	h := p >> 3
	slot := &ss.recent[(h^h>>6^uintptr(len(route))^uintptr(status)^uintptr(method)<<1^uintptr(b2i(https)))%uintptr(len(ss.recent))]
	if s := slot.Load(); s != nil && alias.StringAddr(s.key.route) == p && len(s.key.route) == len(route) &&
		s.key.status == status && s.key.method == method && s.key.https == https {
		return s
	}
	s := ss.all.Get(seriesKey{route, status, method, https})
	slot.Store(s)
	return s
}

// newSeries makes the series of k, its counts in one array.
func (ss *seriesSet) newSeries(k seriesKey) *series {
	d, sz := len(ss.bounds.duration)+1, len(ss.bounds.size)+1
	counts := make([]atomic.Uint64, d+2*sz)
	s := &series{key: k}
	s.duration.counts, s.requestSize.counts, s.responseSize.counts = counts[:d], counts[d:d+sz], counts[d+sz:]
	return s
}

// An activeCount is the gauge of one method and scheme's requests in flight.
type activeCount struct {
	n    atomic.Int64
	seen atomic.Bool // a request has counted: the gauge is exposed from then on
	_    [48]byte    // a cache line each, so that loops counting different methods do not share one
}

func (a *activeCount) add(d int64) {
	if d > 0 && !a.seen.Load() {
		a.seen.Store(true)
	}
	a.n.Add(d)
}

// Describe sends the descriptions of the four request metrics.
func (m *Metrics) Describe(ch chan<- *prometheus.Desc) {
	ch <- m.descs.duration
	ch <- m.descs.requestSize
	ch <- m.descs.responseSize
	ch <- m.descs.active
}

// Collect sends the request metrics, one of each histogram per combination of labels seen and
// the gauge of each method and scheme seen.
func (m *Metrics) Collect(ch chan<- prometheus.Metric) {
	for _, s := range m.series.all.All() {
		k := s.key
		lv := []string{labels.MethodName(int(k.method)), k.route, labels.Status(k.status), scheme(k.https)}
		ch <- s.duration.constMetric(m.descs.duration, m.bounds.durationS, 1e-9, lv)
		ch <- s.requestSize.constMetric(m.descs.requestSize, m.bounds.sizeB, 1, lv)
		ch <- s.responseSize.constMetric(m.descs.responseSize, m.bounds.sizeB, 1, lv)
	}
	for i := range m.active {
		for https := range m.active[i] {
			if a := &m.active[i][https]; a.seen.Load() {
				ch <- prometheus.MustNewConstMetric(m.descs.active, prometheus.GaugeValue, float64(a.n.Load()),
					labels.MethodName(i), scheme(https == 1))
			}
		}
	}
}

func scheme(https bool) string {
	if https {
		return "https"
	}
	return "http"
}
