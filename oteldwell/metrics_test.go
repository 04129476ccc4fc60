package oteldwell_test

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/core/coretest"
	"github.com/dwellhttp/dwell/oteldwell"
	"github.com/dwellhttp/dwell/router"
	"github.com/dwellhttp/dwell/wait"
)

// todoRoutes registers the routes of the metrics and tracing tests on r.
func todoRoutes(r *router.Router) {
	r.GET("/todos/:id", func(c *core.Ctx) { c.WriteString("todo " + c.Param("id")) })
	r.POST("/todos", func(c *core.Ctx) {
		io.Copy(io.Discard, readerOf(c))
		c.SetStatus(201)
		c.WriteString("made")
	})
	r.GET("/boom", func(c *core.Ctx) {
		c.SetStatus(500)
		c.WriteString("failed")
	})
	r.GET("/panic", func(c *core.Ctx) { panic("boom") })
	r.POST("/limited", func(c *core.Ctx) {
		c.Seam().LimitBody(4)
		io.Copy(io.Discard, readerOf(c)) // over the limit: the server answers 413
	})
}

// readerOf reads c's request body.
func readerOf(c *core.Ctx) io.Reader { return bodyReader{c} }

type bodyReader struct{ c *core.Ctx }

func (b bodyReader) Read(p []byte) (int, error) { return b.c.ReadBody(p) }

// TestMetrics: the histograms count each response once, under its method, route pattern (none
// for the router's own 404 and 405), status, scheme and error; the body sizes are those that
// went in and out; and the active requests are back to 0.
func TestMetrics(t *testing.T) {
	mp, reader := newMeter()
	mw, err := oteldwell.Metrics(oteldwell.Options{MeterProvider: mp})
	if err != nil {
		t.Fatal(err)
	}
	sig, done := signal()
	r := router.New()
	r.Use(mw, sig)
	todoRoutes(r)
	_, url := serve(t, r.Handler())

	reqs := []struct {
		method, path, body string
		status             int
	}{
		{"GET", "/todos/1", "", 200},
		{"GET", "/todos/22", "", 200},
		{"POST", "/todos", "hello", 201},
		{"GET", "/nowhere", "", 404},
		{"DELETE", "/todos/1", "", 405},
		{"FROB", "/todos/1", "", 405},
		{"GET", "/boom", "", 500},
		{"GET", "/panic", "", 500},
		{"POST", "/limited", "too long", 413},
	}
	for _, rq := range reqs {
		if status, _ := do(t, rq.method, url+rq.path, rq.body); status != rq.status {
			t.Fatalf("%s %s: %d, want %d", rq.method, rq.path, status, rq.status)
		}
		coretest.Receive(t, "the response's end", done)
	}

	ms := collect(t, reader)
	want := map[string]uint64{
		"http.request.method=GET,http.response.status_code=200,http.route=/todos/:id,url.scheme=http":                          2,
		"http.request.method=POST,http.response.status_code=201,http.route=/todos,url.scheme=http":                             1,
		"http.request.method=GET,http.response.status_code=404,url.scheme=http":                                                1,
		"http.request.method=DELETE,http.response.status_code=405,url.scheme=http":                                             1,
		"http.request.method=_OTHER,http.response.status_code=405,url.scheme=http":                                             1,
		"error.type=500,http.request.method=GET,http.response.status_code=500,http.route=/boom,url.scheme=http":                1,
		"error.type=panic,http.request.method=GET,http.response.status_code=500,http.route=/panic,url.scheme=http":             1,
		"error.type=body_too_large,http.request.method=POST,http.response.status_code=413,http.route=/limited,url.scheme=http": 1,
	}
	got := histogramCounts[float64](t, ms["http.server.request.duration"])
	if len(got) != len(want) {
		t.Errorf("duration's attribute sets:\n\t%s", keys(got))
	}
	for k, n := range want {
		if got[k] != n {
			t.Errorf("duration count of %s: %d, want %d", k, got[k], n)
		}
	}
	if d := ms["http.server.request.duration"]; d.Unit != "s" {
		t.Errorf("duration's unit %q", d.Unit)
	}

	resp := histogramSums(t, ms["http.server.response.body.size"])
	if n := resp["http.request.method=GET,http.response.status_code=200,http.route=/todos/:id,url.scheme=http"]; n != int64(len("todo 1")+len("todo 22")) {
		t.Errorf("response bytes of GET /todos/:id: %d", n)
	}
	req := histogramSums(t, ms["http.server.request.body.size"])
	if n := req["http.request.method=POST,http.response.status_code=201,http.route=/todos,url.scheme=http"]; n != 5 {
		t.Errorf("request bytes of POST /todos: %d", n)
	}
	for k, n := range sums(t, ms["http.server.active_requests"]) {
		if n != 0 || strings.Contains(k, "status_code") {
			t.Errorf("active requests %s: %d", k, n)
		}
	}
}

// TestMetricsContinuation: a request is active while its handler waits, detached, and is
// recorded with what its continuation answered once that has finished.
func TestMetricsContinuation(t *testing.T) {
	mp, reader := newMeter()
	mw, err := oteldwell.Metrics(oteldwell.Options{MeterProvider: mp})
	if err != nil {
		t.Fatal(err)
	}
	sig, done := signal()
	var seq wait.Sequence
	detached := make(chan struct{}, 1)
	r := router.New()
	r.Use(mw, sig)
	r.GET("/later", func(c *core.Ctx) {
		seq.OnWait(c, 0, 0, func(c *core.Ctx, err error) {
			c.SetStatus(202)
			c.WriteString("done")
		})
		detached <- struct{}{}
	})
	_, url := serve(t, r.Handler())

	status := make(chan int, 1)
	go func() {
		s, _ := do(t, "GET", url+"/later", "")
		status <- s
	}()
	coretest.Receive(t, "the handler's detach", detached)
	const active = "http.request.method=GET,url.scheme=http"
	if n := sums(t, collect(t, reader)["http.server.active_requests"])[active]; n != 1 {
		t.Fatalf("%d active requests while detached, want 1", n)
	}
	seq.Advance(1)
	if s := coretest.Receive(t, "the response", status); s != 202 {
		t.Fatalf("status %d", s)
	}
	coretest.Receive(t, "the response's end", done)
	ms := collect(t, reader)
	if n := sums(t, ms["http.server.active_requests"])[active]; n != 0 {
		t.Fatalf("%d active requests after the response, want 0", n)
	}
	got := histogramCounts[float64](t, ms["http.server.request.duration"])
	if n := got["http.request.method=GET,http.response.status_code=202,http.route=/later,url.scheme=http"]; n != 1 {
		t.Fatalf("duration's attribute sets:\n\t%s", keys(got))
	}
}

// TestMetricsAroundRouter: wrapped around the router's Handler rather than given to its Use, the
// middleware learns the route pattern once the router has matched, or its handler panicked.
func TestMetricsAroundRouter(t *testing.T) {
	mp, reader := newMeter()
	mw, err := oteldwell.Metrics(oteldwell.Options{MeterProvider: mp})
	if err != nil {
		t.Fatal(err)
	}
	sig, done := signal()
	r := router.New()
	todoRoutes(r)
	_, url := serve(t, mw(sig(r.Handler())))
	for _, path := range []string{"/todos/3", "/nowhere", "/panic"} {
		do(t, "GET", url+path, "")
		coretest.Receive(t, "the response's end", done)
	}
	got := histogramCounts[float64](t, collect(t, reader)["http.server.request.duration"])
	for _, k := range []string{
		"http.request.method=GET,http.response.status_code=200,http.route=/todos/:id,url.scheme=http",
		"http.request.method=GET,http.response.status_code=404,url.scheme=http",
		// A route that panics: its 500, under its route.
		"error.type=panic,http.request.method=GET,http.response.status_code=500,http.route=/panic,url.scheme=http",
	} {
		if got[k] != 1 {
			t.Errorf("no %s in:\n\t%s", k, keys(got))
		}
	}
}

// TestMetricsExemplars: inside Tracing, the histograms' exemplars name the request's span, so
// that a slow bucket leads to a trace.
func TestMetricsExemplars(t *testing.T) {
	mp, reader := newMeter()
	tp, sr := newTracer()
	mw, err := oteldwell.Metrics(oteldwell.Options{MeterProvider: mp})
	if err != nil {
		t.Fatal(err)
	}
	sig, done := signal()
	r := router.New()
	r.Use(oteldwell.Tracing(oteldwell.Options{TracerProvider: tp}), mw, sig)
	todoRoutes(r)
	_, url := serve(t, r.Handler())
	do(t, "GET", url+"/todos/5", "")
	coretest.Receive(t, "the response's end", done)

	h := collect(t, reader)["http.server.request.duration"].Data.(metricdata.Histogram[float64])
	if len(h.DataPoints) != 1 || len(h.DataPoints[0].Exemplars) != 1 {
		t.Fatalf("data points %+v", h.DataPoints)
	}
	ex, span := h.DataPoints[0].Exemplars[0], sr.Ended()[0].SpanContext()
	if tid, sid := span.TraceID(), span.SpanID(); !bytes.Equal(ex.TraceID, tid[:]) || !bytes.Equal(ex.SpanID, sid[:]) {
		t.Fatalf("exemplar of trace %x span %x, the request's span is %v", ex.TraceID, ex.SpanID, span)
	}
}
