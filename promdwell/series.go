package promdwell

import (
	"maps"
	"math"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/dwellhttp/dwell/internal/labels"
	"github.com/prometheus/client_golang/prometheus"
)

// The request metrics are recorded here rather than in client_golang's HistogramVec and
// GaugeVec, whose every observation takes several atomic operations (a hot and a cold copy of
// each count, so that a scrape reads a consistent one, and a compare-and-swap loop for the
// float sum) after a lookup by label values. A request here costs one lookup by route, and per
// histogram two atomic additions, to its bucket's count and to its sum, kept in integers
// (nanoseconds, bytes). A scrape reads each count once: a histogram's count is the sum of its
// buckets', so the two always agree, and its sum may be a request ahead or behind them, as a
// sum read beside concurrent observations may be in any exporter.

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
	status                              int
	duration, requestSize, responseSize histogram
}

// A routeSeries holds the series of one method, route and scheme, by status: a request finds
// its status's among the few a route answers with.
type routeSeries struct {
	route    string
	method   uint8 // labels.MethodIndex
	https    bool
	statuses atomic.Pointer[[]*series] // immutable, replaced whole under seriesSet.mu
}

// routeKey is the key of a routeSeries.
type routeKey struct {
	route  string
	method uint8 // labels.MethodIndex
	https  bool
}

// A seriesSet holds every series, found without a lock: a lookup loads immutable maps and
// slices, and a series not seen before is added to copies of them under a mutex. The labels are
// bounded — the method among the labels.Methods, the route a pattern of the router's or one of
// its labels, the status among 900 codes, the scheme http or https — so the set is too.
type seriesSet struct {
	bounds *seriesBounds
	routes atomic.Pointer[map[routeKey]*routeSeries]
	mu     sync.Mutex
	// recent finds a routeSeries without hashing its route: a route label is a pattern the
	// router keeps or one of its label constants, so a route's requests bring the same string,
	// the same bytes at the same address, and a slot matches on the address and the length. A
	// match means the same bytes, because the slot's routeSeries holds its route string: while
	// a slot can match, the bytes it compares with cannot be freed and reused for another
	// string. Only addresses are compared; no pointer is made from one.
	recent [64]atomic.Pointer[routeSeries]
}

// get returns the series of a request's labels, made the first time.
func (ss *seriesSet) get(method uint8, route string, https bool, status int) *series {
	p := unsafe.StringData(route)
	h := uintptr(unsafe.Pointer(p))
	slot := &ss.recent[(h>>3^h>>9^uintptr(len(route))^uintptr(method)<<1^uintptr(b2i(https)))%uintptr(len(ss.recent))]
	rs := slot.Load()
	if rs == nil || unsafe.StringData(rs.route) != p || len(rs.route) != len(route) || rs.method != method || rs.https != https {
		rs = nil
		if m := ss.routes.Load(); m != nil {
			rs = (*m)[routeKey{route, method, https}]
		}
		if rs != nil {
			slot.Store(rs)
		}
	}
	if rs != nil {
		if st := rs.statuses.Load(); st != nil {
			for _, s := range *st {
				if s.status == status {
					return s
				}
			}
		}
	}
	return ss.add(routeKey{route, method, https}, status)
}

// add makes the series of k and status, unless another request has meanwhile.
func (ss *seriesSet) add(k routeKey, status int) *series {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	old := ss.routes.Load()
	var rs *routeSeries
	if old != nil {
		rs = (*old)[k]
	}
	if rs == nil {
		rs = &routeSeries{route: k.route, method: k.method, https: k.https}
		m := map[routeKey]*routeSeries{}
		if old != nil {
			m = maps.Clone(*old)
		}
		m[k] = rs
		ss.routes.Store(&m)
	}
	var st []*series
	if p := rs.statuses.Load(); p != nil {
		st = *p
	}
	for _, s := range st {
		if s.status == status {
			return s
		}
	}
	s := &series{status: status}
	counts := make([]atomic.Uint64, len(ss.bounds.duration)+1+2*(len(ss.bounds.size)+1))
	d, sz := len(ss.bounds.duration)+1, len(ss.bounds.size)+1
	s.duration.counts, s.requestSize.counts, s.responseSize.counts = counts[:d], counts[d:d+sz], counts[d+sz:]
	grown := append(append(make([]*series, 0, len(st)+1), st...), s)
	rs.statuses.Store(&grown)
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
	if routes := m.series.routes.Load(); routes != nil {
		for _, rs := range *routes {
			st := rs.statuses.Load()
			if st == nil {
				continue
			}
			for _, s := range *st {
				lv := []string{labels.MethodName(int(rs.method)), rs.route, statusText(s.status), scheme(rs.https)}
				ch <- s.duration.constMetric(m.descs.duration, m.bounds.durationS, 1e-9, lv)
				ch <- s.requestSize.constMetric(m.descs.requestSize, m.bounds.sizeB, 1, lv)
				ch <- s.responseSize.constMetric(m.descs.responseSize, m.bounds.sizeB, 1, lv)
			}
		}
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
