package router

import (
	"net/http"
	"testing"
	"time"

	"github.com/dwellhttp/dwell/core"
	"github.com/julienschmidt/httprouter"
)

// The routing benchmarks compare dispatch (lookup, parameters onto the Ctx, the handler call)
// with httprouter's own ServeHTTP over the same 50-route table and request mix, both with
// handlers that do nothing. Run them with:
//
//	go test -run '^$' -bench 'Route' -benchtime 2s ./router/
//
// On a busy machine the ns/op of separate benchmarks swing widely; BenchmarkRouteRatio, which
// interleaves the two, gives the comparison to trust.

func apiRouter() *Router {
	r := New()
	for _, rt := range apiRoutes {
		r.Handle(rt.method, rt.path, func(*core.Ctx) {})
	}
	r.Handler()
	return r
}

func BenchmarkRouteDwell50(b *testing.B) {
	r := apiRouter()
	var c core.Ctx
	for _, q := range apiMix {
		if !r.dispatch(&c, q.method, q.path) {
			b.Fatalf("%s %s missed", q.method, q.path)
		}
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		q := &apiMix[i%len(apiMix)]
		r.dispatch(&c, q.method, q.path)
		c.Seam().SetParams(nil)
	}
}

// apiHttprouter returns httprouter with the same table, and the mix as requests.
func apiHttprouter() (*httprouter.Router, []*http.Request) {
	r := httprouter.New()
	for _, rt := range apiRoutes {
		r.Handle(rt.method, rt.path, func(http.ResponseWriter, *http.Request, httprouter.Params) {})
	}
	reqs := make([]*http.Request, len(apiMix))
	for i, q := range apiMix {
		reqs[i], _ = http.NewRequest(q.method, q.path, nil)
	}
	return r, reqs
}

func BenchmarkRouteHttprouter50(b *testing.B) {
	r, reqs := apiHttprouter()
	var w nopWriter
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		r.ServeHTTP(&w, reqs[i%len(reqs)])
	}
}

// BenchmarkRouteRatio dispatches the mix through both routers in alternating batches of 2,000
// requests and reports the fastest batch of each, per request, and their ratio: on a machine
// shared with other work, the fastest of thousands of short batches is the figure least
// disturbed by time taken away.
func BenchmarkRouteRatio(b *testing.B) {
	dr := apiRouter()
	var c core.Ctx
	hr, reqs := apiHttprouter()
	var w nopWriter
	const batch = 100 * 20
	runs := [2]func(){
		func() {
			for i := range batch {
				q := &apiMix[i%len(apiMix)]
				dr.dispatch(&c, q.method, q.path)
				c.Seam().SetParams(nil)
			}
		},
		func() {
			for i := range batch {
				hr.ServeHTTP(&w, reqs[i%len(reqs)])
			}
		},
	}
	best := [2]time.Duration{time.Hour, time.Hour}
	for b.Loop() {
		for k, run := range runs {
			t0 := time.Now()
			run()
			best[k] = min(best[k], time.Since(t0))
		}
	}
	b.ReportMetric(float64(best[0].Nanoseconds())/batch, "dwell-ns/req")
	b.ReportMetric(float64(best[1].Nanoseconds())/batch, "httprouter-ns/req")
	b.ReportMetric(float64(best[0])/float64(best[1]), "ratio")
}

// BenchmarkRouteDwellStatic and BenchmarkRouteDwellParam show the two kinds of hit apart.
func BenchmarkRouteDwellStatic(b *testing.B) { benchOne(b, "GET", "/search/repositories") }

func BenchmarkRouteDwellParam(b *testing.B) {
	benchOne(b, "GET", "/repos/dwellhttp/dwell/issues/42")
}

func benchOne(b *testing.B, method, path string) {
	r := apiRouter()
	var c core.Ctx
	b.ReportAllocs()
	for b.Loop() {
		r.dispatch(&c, method, path)
		c.Seam().SetParams(nil)
	}
}

type nopWriter struct{}

func (*nopWriter) Header() http.Header         { return http.Header{} }
func (*nopWriter) Write(p []byte) (int, error) { return len(p), nil }
func (*nopWriter) WriteHeader(int)             {}
