package main

import (
	"net/http"
	"strings"
	"testing"

	"github.com/dwellhttp/dwell/core/coretest"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// scrape fetches base/metrics and parses it with Prometheus's own text parser.
func scrape(t *testing.T, base string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain; version=0.0.4") {
		t.Fatalf("/metrics: %d, %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return mfs
}

// value returns the value (a histogram's count) of the series of name with the labels given,
// summed over the series that have them, or -1 when none does.
func value(mfs map[string]*dto.MetricFamily, name string, labels ...string) float64 {
	mf, sum, found := mfs[name], 0.0, false
	if mf == nil {
		return -1
	}
next:
	for _, m := range mf.Metric {
		have := map[string]string{}
		for _, l := range m.Label {
			have[l.GetName()] = l.GetValue()
		}
		for i := 0; i+1 < len(labels); i += 2 {
			if have[labels[i]] != labels[i+1] {
				continue next
			}
		}
		found = true
		switch {
		case m.Histogram != nil:
			sum += float64(m.Histogram.GetSampleCount())
		case m.Gauge != nil:
			sum += m.Gauge.GetValue()
		default:
			sum += m.Counter.GetValue()
		}
	}
	if !found {
		return -1
	}
	return sum
}

// TestCommandMetrics runs a scripted mix against the command and checks /metrics: each request
// counted once under its route pattern and real status (the router's 404, 405 and redirect
// under their labels, the server's own 413), refusals by status, and the connection gauges
// matching what the script holds open; the access log lines carry the route.
func TestCommandMetrics(t *testing.T) {
	dir := t.TempDir()
	cmd := coretest.StartCommand(t, "TODO_RUN_MAIN", dir)
	base := "http://" + cmd.Addr
	for _, s := range []struct {
		method, path, body string
		status             int
	}{
		{"GET", "/todos", "", 200},
		{"POST", "/todos", `{"title":"one"}`, 201},
		{"POST", "/todos", `{"title":"two"}`, 201},
		{"GET", "/todos/1", "", 200},
		{"GET", "/todos/99", "", 404},
		{"GET", "/nowhere", "", 404},
		{"PATCH", "/todos", "", 405},
		{"GET", "/todos/", "", 301},
		{"POST", "/todos", `{"title":"` + strings.Repeat("x", 100) + `"}`, 413},
	} {
		var fields []string
		if s.body != "" {
			fields = append(fields, jsonType)
		}
		if resp, _ := do(t, s.method, base+s.path, s.body, fields...); resp.StatusCode != s.status {
			t.Fatalf("%s %s: %d, want %d", s.method, s.path, resp.StatusCode, s.status)
		}
	}
	// Answers the server makes itself: an attachment declared over its bound (413, through the
	// middleware, under its route), a header section over the bound (431, before any route).
	up := coretest.Dial(t, cmd.Addr)
	up.Send("POST /todos/1/attachment HTTP/1.1\r\nHost: h\r\nContent-Length: 2000000000\r\n\r\n")
	if resp, _ := up.Response("POST"); resp.StatusCode != 413 {
		t.Fatalf("attachment over the bound: %d", resp.StatusCode)
	}
	big := coretest.Dial(t, cmd.Addr)
	big.Send("GET /todos HTTP/1.1\r\nHost: h\r\nX-Big: " + strings.Repeat("b", 20<<10) + "\r\n\r\n")
	if resp, body := big.Response("GET"); resp.StatusCode != 431 || body != `{"error":"request header fields too large"}`+"\n" {
		t.Fatalf("header over the bound: %d %q", resp.StatusCode, body)
	}

	poll := coretest.Dial(t, cmd.Addr)
	poll.Send("GET /todos/changes?after=2&timeout=60000 HTTP/1.1\r\nHost: h\r\n\r\n")
	const idle = 100
	for range idle {
		c := coretest.Dial(t, cmd.Addr)
		c.Send("GET /todos/1 HTTP/1.1\r\nHost: h\r\n\r\n")
		c.Response("GET")
	}

	var mfs map[string]*dto.MetricFamily
	coretest.WaitFor(t, "the poll parked and the idle connections counted", func() bool {
		mfs = scrape(t, base)
		return value(mfs, "dwell_server_connections", "state", "parked") == 1 &&
			value(mfs, "dwell_server_connections", "state", "idle") >= idle
	})
	// The scrape's own connection is working (gathering off the loop); http.Get's earlier
	// kept-alive connections are idle beside the hundred.
	if n := value(mfs, "dwell_server_connections", "state", "working"); n != 1 {
		t.Errorf("%v working connections, want 1 (the scrape)", n)
	}
	open := 0.0
	for _, st := range []string{"idle", "reading", "running", "parked", "working", "writing", "closing", "handed_over"} {
		open += value(mfs, "dwell_server_connections", "state", st)
	}
	if want := float64(idle + 1 + 1); open < want || open > want+4 {
		t.Errorf("%v open connections, want the %v the test holds, and net/http's few", open, want)
	}
	if n := value(mfs, "dwell_server_open_connections"); n != open {
		t.Errorf("dwell_server_open_connections %v, the states add up to %v", n, open)
	}
	const d = "http_server_request_duration_seconds"
	for _, c := range []struct {
		method, route, status string
		n                     float64
	}{
		{"GET", "/todos", "200", 1},
		{"POST", "/todos", "201", 2},
		{"GET", "/todos/:id", "200", 1 + idle},
		{"GET", "/todos/:id", "404", 1},
		{"GET", "(not found)", "404", 1},
		{"PATCH", "(method not allowed)", "405", 1},
		{"GET", "(redirect)", "301", 1},
		{"POST", "/todos", "413", 1},
		{"POST", "/todos/:id/attachment", "413", 1},
	} {
		got := value(mfs, d, "http_request_method", c.method, "http_route", c.route, "http_response_status_code", c.status, "url_scheme", "http")
		if got != c.n {
			t.Errorf("%s %s %s: counted %v, want %v", c.method, c.route, c.status, got, c.n)
		}
	}
	// The JSON body over -max-body is the application's own 413; the server's are these.
	for status, n := range map[string]float64{"413": 1, "431": 1, "400": 0} {
		if got := value(mfs, "dwell_server_refusals_total", "http_response_status_code", status); got != n {
			t.Errorf("%v %ss among the refusals, want %v", got, status, n)
		}
	}
	if n := value(mfs, "http_server_active_requests"); n != 2 {
		t.Errorf("%v active requests, want 2 (the poll and the scrape)", n)
	}

	if err := cmd.Terminate(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait(coretest.Patience)
	lines := accessLog(t, dir)
	for path, route := range map[string]string{"/todos/1": "/todos/:id", "/nowhere": "(not found)", "/todos/": "(redirect)", "/metrics": "/metrics"} {
		if ls := lines[path]; len(ls) == 0 || ls[0]["route"] != route {
			t.Errorf("%s: access log lines %v, want the route %q", path, ls, route)
		}
	}
}
