package promdwell

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// TestHistogramAsClientGolang: the histograms record what client_golang's Histogram records
// for the same observations — the count of each bucket, the count and the sum — at the bucket
// bounds themselves, next to them and far past the last, for the duration and the size
// buckets, with observations made from several goroutines at once.
func TestHistogramAsClientGolang(t *testing.T) {
	for _, tc := range []struct {
		name   string
		bounds []float64
		scale  float64 // integer units per unit of the bounds
	}{
		{"duration", DurationBuckets, 1e9},
		{"size", SizeBuckets, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ours := histogram{counts: make([]atomic.Uint64, len(tc.bounds)+1)}
			theirs := prometheus.NewHistogram(prometheus.HistogramOpts{Name: "h", Help: "h", Buckets: tc.bounds})
			ib := scaledBounds(tc.bounds, tc.scale)
			var vs []int64
			for _, b := range ib {
				vs = append(vs, b-1, b, b+1)
			}
			vs = append(vs, 0, 1, ib[len(ib)-1]*1000)
			for range 1000 {
				vs = append(vs, rand.Int64N(2*ib[len(ib)-1]))
			}
			var wg sync.WaitGroup
			for part := range 4 {
				wg.Go(func() {
					for i := part; i < len(vs); i += 4 {
						ours.observe(vs[i], ib)
						theirs.Observe(float64(vs[i]) / tc.scale)
					}
				})
			}
			wg.Wait()
			var got, want dto.Metric
			if err := ours.constMetric(prometheus.NewDesc("h", "h", nil, nil), tc.bounds, 1/tc.scale, nil).Write(&got); err != nil {
				t.Fatal(err)
			}
			if err := theirs.Write(&want); err != nil {
				t.Fatal(err)
			}
			g, w := got.GetHistogram(), want.GetHistogram()
			if g.GetSampleCount() != w.GetSampleCount() || len(g.GetBucket()) != len(w.GetBucket()) {
				t.Fatalf("count %d in %d buckets, want %d in %d", g.GetSampleCount(), len(g.GetBucket()), w.GetSampleCount(), len(w.GetBucket()))
			}
			for i, b := range g.GetBucket() {
				if wb := w.GetBucket()[i]; b.GetUpperBound() != wb.GetUpperBound() || b.GetCumulativeCount() != wb.GetCumulativeCount() {
					t.Errorf("bucket le=%g has %d, want le=%g with %d", b.GetUpperBound(), b.GetCumulativeCount(), wb.GetUpperBound(), wb.GetCumulativeCount())
				}
			}
			if d := math.Abs(g.GetSampleSum() - w.GetSampleSum()); d > 1e-9*math.Abs(w.GetSampleSum()) {
				t.Errorf("sum %g, want %g", g.GetSampleSum(), w.GetSampleSum())
			}
		})
	}
}

// TestSeriesSetFindsByContent: a route's series is found whatever string brings the route —
// the same bytes, a copy elsewhere in memory — and never another route's, with more routes
// than the recent slots, under every method and scheme.
func TestSeriesSetFindsByContent(t *testing.T) {
	ss := newSeriesSet(&seriesBounds{duration: scaledBounds(DurationBuckets, 1e9), size: scaledBounds(SizeBuckets, 1)})
	type key struct {
		route  string
		method uint8
		https  bool
		status int
	}
	made := map[key]*series{}
	for round := range 3 {
		for i := range 200 {
			route := fmt.Sprintf("/r%d/:id", i)
			if round == 1 {
				route = strings.Clone(route) // the same route in other bytes
			}
			for _, k := range []key{{route, 0, false, 200}, {route, 2, true, 201}, {route, 0, false, 404}} {
				s := ss.get(k.method, k.route, k.https, k.status)
				if s.key.status != k.status {
					t.Fatalf("%v: a series of status %d", k, s.key.status)
				}
				k.route = strings.Clone(k.route)
				if prev, ok := made[k]; ok && prev != s {
					t.Fatalf("round %d: %v found another series", round, k)
				}
				made[k] = s
			}
		}
	}
	if len(made) != 600 {
		t.Fatalf("%d series, want 600", len(made))
	}
	seen := map[*series]bool{}
	for _, s := range made {
		if seen[s] {
			t.Fatal("two label sets share a series")
		}
		seen[s] = true
	}
}
