package promdwell_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/core/coretest"
	"github.com/dwellhttp/dwell/promdwell"
	"github.com/dwellhttp/dwell/router"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// service is a small service with metrics: routes, a long poll, a body limit.
func service(t *testing.T) (addr string, srv *core.Server, wake chan core.Waker) {
	reg := prometheus.NewRegistry()
	m := promdwell.NewMetrics(reg)
	wake = make(chan core.Waker, 1)
	r := router.New()
	r.Use(m.Middleware)
	r.GET("/todos", func(c *core.Ctx) { c.WriteString("[]") })
	r.GET("/todos/:id", func(c *core.Ctx) { c.WriteString("{}") })
	r.POST("/todos", func(c *core.Ctx) {
		c.Seam().LimitBody(16)
		b := make([]byte, 64)
		for {
			_, err := c.ReadBody(b)
			if err == io.EOF {
				break
			}
			if err != nil {
				return // the server answers 413
			}
		}
		c.SetStatus(201)
	})
	r.GET("/poll", func(c *core.Ctx) {
		wake <- c.Waker()
		c.Suspend(0)
		c.WriteString("woken")
	})
	r.GET("/boom", func(c *core.Ctx) { panic("on purpose") })
	r.GET("/metrics", promdwell.Handler(reg))
	srv, addr = coretest.Serve(t, r.Handler(), core.Options{Loops: 2})
	reg.MustRegister(promdwell.NewCollector(srv))
	return addr, srv, wake
}

// scrape fetches /metrics and parses it with the Prometheus text parser.
func scrape(t *testing.T, addr string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Fatalf("Content-Type %q", ct)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return mfs
}

// count returns the histogram's sample count for the labels given, -1 if no series has them.
func count(mfs map[string]*dto.MetricFamily, name string, labels map[string]string) int64 {
	mf := mfs[name]
	if mf == nil {
		return -1
	}
next:
	for _, m := range mf.Metric {
		have := map[string]string{}
		for _, l := range m.Label {
			have[l.GetName()] = l.GetValue()
		}
		for k, v := range labels {
			if have[k] != v {
				continue next
			}
		}
		if h := m.GetHistogram(); h != nil {
			return int64(h.GetSampleCount())
		}
		if g := m.GetGauge(); g != nil {
			return int64(g.GetValue())
		}
		return int64(m.GetCounter().GetValue())
	}
	return -1
}

func do(t *testing.T, method, url, body string) int {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	if body == "" {
		req.Body = nil
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// TestMetricsScriptedMix: each request counted once under its route and real status — the
// router's own 404, 405 and redirect, and the server's own 413, included — and the gauges
// matching the connections the test holds open.
func TestMetricsScriptedMix(t *testing.T) {
	addr, _, wake := service(t)
	base := "http://" + addr
	for _, s := range []struct {
		method, path, body string
		status             int
	}{
		{"GET", "/todos", "", 200},
		{"GET", "/todos", "", 200},
		{"GET", "/todos/7", "", 200},
		{"POST", "/todos", "short", 201},
		{"POST", "/todos", strings.Repeat("x", 100), 413},
		{"GET", "/nowhere", "", 404},
		{"DELETE", "/todos", "", 405},
		{"GET", "/todos/", "", 301},
		{"GET", "/boom", "", 500},
	} {
		if got := do(t, s.method, base+s.path, s.body); got != s.status {
			t.Fatalf("%s %s: %d, want %d", s.method, s.path, got, s.status)
		}
	}
	poll := coretest.Dial(t, addr)
	poll.Send("GET /poll HTTP/1.1\r\nHost: h\r\n\r\n")
	w := coretest.Receive(t, "the poll parked", wake)
	for range 10 { // kept open until the test ends
		c := coretest.Dial(t, addr)
		c.Send("GET /todos HTTP/1.1\r\nHost: h\r\n\r\n")
		c.Response("GET")
	}

	var mfs map[string]*dto.MetricFamily
	coretest.WaitFor(t, "the idle connections counted", func() bool {
		mfs = scrape(t, addr)
		// The idle ten, and net/http's kept-alive connection, which serves the scrape: it is
		// running; the poll is parked.
		return count(mfs, "dwell_server_connections", map[string]string{"state": "idle"}) == 10
	})
	const d = "http_server_request_duration_seconds"
	for _, c := range []struct {
		method, route, status string
		n                     int64
	}{
		{"GET", "/todos", "200", 12},
		{"GET", "/todos/:id", "200", 1},
		{"POST", "/todos", "201", 1},
		{"POST", "/todos", "413", 1},
		{"GET", router.LabelNotFound, "404", 1},
		{"DELETE", router.LabelMethodNotAllowed, "405", 1},
		{"GET", router.LabelRedirect, "301", 1},
		{"GET", "/boom", "500", 1}, // the server's 500 for a panic, under the route all the same
	} {
		labels := map[string]string{"http_request_method": c.method, "http_route": c.route,
			"http_response_status_code": c.status, "url_scheme": "http"}
		if got := count(mfs, d, labels); got != c.n {
			t.Errorf("%v: counted %d, want %d", labels, got, c.n)
		}
	}
	for state, n := range map[string]int64{"parked": 1, "working": 1, "reading": 0, "writing": 0} {
		if got := count(mfs, "dwell_server_connections", map[string]string{"state": state}); got != n {
			t.Errorf("%s %d, want %d (the poll parked, the scrape working)", state, got, n)
		}
	}
	if got := count(mfs, "dwell_server_refusals_total", map[string]string{"http_response_status_code": "413"}); got != 1 {
		t.Errorf("413s counted %d, want 1", got)
	}
	if got := count(mfs, "http_server_active_requests", map[string]string{"http_request_method": "GET"}); got != 2 {
		t.Errorf("active GETs %d, want 2 (the poll and the scrape)", got)
	}
	w.Wake(nil)
	if _, body := poll.Response("GET"); body != "woken" {
		t.Fatalf("poll answered %q", body)
	}
	mfs = scrape(t, addr)
	if got := count(mfs, d, map[string]string{"http_route": "/poll"}); got != 1 {
		t.Errorf("the poll counted %d times", got)
	}
}

// TestCollectorLint checks the collector's metrics with client_golang's own linter.
func TestCollectorLint(t *testing.T) {
	_, srv, _ := service(t)
	problems, err := testutil.CollectAndLint(promdwell.NewCollector(srv))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("%s: %s", p.Metric, p.Text)
	}
	m := promdwell.NewMetrics(nil)
	r := router.New()
	r.Use(m.Middleware)
	r.GET("/todos", func(c *core.Ctx) { c.WriteString("[]") })
	_, addr := coretest.Serve(t, r.Handler(), core.Options{})
	c := coretest.Dial(t, addr)
	for _, path := range []string{"/todos", "/nowhere"} {
		c.Send("GET " + path + " HTTP/1.1\r\nHost: h\r\n\r\n")
		c.Response("GET")
	}
	// Both requests are recorded once their responses are complete, before the next request on
	// the connection is read; a third makes sure of the second.
	c.Send("GET /todos HTTP/1.1\r\nHost: h\r\n\r\n")
	c.Response("GET")
	if n := testutil.CollectAndCount(m, "http_server_request_duration_seconds"); n != 2 {
		t.Fatalf("%d duration series, want 2 (/todos, not found)", n)
	}
	problems, err = testutil.CollectAndLint(m)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("%s: %s", p.Metric, p.Text)
	}
}
