package oteldwell_test

import (
	"context"
	"io"
	"net/http"
	"sort"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/core/coretest"
)

// signal returns a middleware whose OnDone hook sends the response's outcome on a new channel.
// Placed inside the middleware under test, its hook runs after that middleware's own (hooks run
// in the order registered), so that a test waits for a response to be recorded rather than for
// a time.
func signal() (func(core.Handler) core.Handler, chan core.Done) {
	ch := make(chan core.Done, 64)
	return func(next core.Handler) core.Handler {
		return func(c *core.Ctx) {
			c.OnDone(func(d core.Done) { ch <- d })
			next(c)
		}
	}, ch
}

// newMeter returns a meter provider that a ManualReader collects from.
func newMeter() (*sdkmetric.MeterProvider, *sdkmetric.ManualReader) {
	reader := sdkmetric.NewManualReader()
	return sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)), reader
}

// collect returns the metrics the reader holds, by name.
func collect(t testing.TB, reader *sdkmetric.ManualReader) map[string]metricdata.Metrics {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	ms := map[string]metricdata.Metrics{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			ms[m.Name] = m
		}
	}
	return ms
}

// attrs writes a set as "k=v,k=v", its keys in order.
func attrs(s attribute.Set) string { return s.Encoded(attribute.DefaultEncoder()) }

// histogramCounts returns the count of a histogram's data points, by attributes.
func histogramCounts[N int64 | float64](t testing.TB, m metricdata.Metrics) map[string]uint64 {
	t.Helper()
	h, ok := m.Data.(metricdata.Histogram[N])
	if !ok {
		t.Fatalf("%s is a %T", m.Name, m.Data)
	}
	counts := map[string]uint64{}
	for _, dp := range h.DataPoints {
		counts[attrs(dp.Attributes)] += dp.Count
	}
	return counts
}

// histogramSums returns the sum of an integer histogram's data points, by attributes.
func histogramSums(t testing.TB, m metricdata.Metrics) map[string]int64 {
	t.Helper()
	h, ok := m.Data.(metricdata.Histogram[int64])
	if !ok {
		t.Fatalf("%s is a %T", m.Name, m.Data)
	}
	sums := map[string]int64{}
	for _, dp := range h.DataPoints {
		sums[attrs(dp.Attributes)] += dp.Sum
	}
	return sums
}

// sums returns the values of a sum's (a counter's, an UpDownCounter's) data points, by
// attributes.
func sums(t testing.TB, m metricdata.Metrics) map[string]int64 {
	t.Helper()
	s, ok := m.Data.(metricdata.Sum[int64])
	if !ok {
		t.Fatalf("%s is a %T", m.Name, m.Data)
	}
	vals := map[string]int64{}
	for _, dp := range s.DataPoints {
		vals[attrs(dp.Attributes)] += dp.Value
	}
	return vals
}

// keys returns m's keys in order, for a failure's message.
func keys[V any](m map[string]V) string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return strings.Join(ks, "\n\t")
}

// do sends a request to url and returns the response's status and body.
func do(t testing.TB, method, url, body string, header ...string) (int, string) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := noRedirects.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// noRedirects is a client that reports redirects rather than following them.
var noRedirects = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error {
	return http.ErrUseLastResponse
}}

// serve serves h for the length of the test and returns its base URL.
func serve(t testing.TB, h core.Handler) (*core.Server, string) {
	t.Helper()
	s, addr := coretest.Serve(t, h, core.Options{})
	return s, "http://" + addr
}
