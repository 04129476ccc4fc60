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
)

// TestH2BodyOfNoLength: an HTTP/2 request body without content-length (and HTTP/2 has no
// chunked coding) is not observed, as a chunked one is not, rather than observed as none.
func TestH2BodyOfNoLength(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := promdwell.NewMetrics(reg)
	done := make(chan core.Done, 1)
	r := router.New()
	r.Use(m.Middleware, func(next core.Handler) core.Handler {
		return func(c *core.Ctx) { c.OnDone(func(d core.Done) { done <- d }); next(c) }
	})
	r.POST("/up", func(c *core.Ctx) {
		b := make([]byte, 4096)
		n := 0
		for {
			k, err := c.ReadBody(b)
			n += k
			if err != nil {
				break
			}
		}
		c.SetStatus(201)
	})
	_, addr := coretest.Serve(t, r.Handler(), core.Options{})
	tr := &http.Transport{Protocols: new(http.Protocols)}
	tr.Protocols.SetUnencryptedHTTP2(true)
	defer tr.CloseIdleConnections()
	body := strings.Repeat("x", 1000)
	req, _ := http.NewRequest("POST", "http://"+addr+"/up", io.NopCloser(strings.NewReader(body)))
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	coretest.Receive(t, "the response's end", done)
	if resp.ProtoMajor != 2 {
		t.Fatalf("the request went over %s", resp.Proto)
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "http_server_request_body_size_bytes" {
			continue
		}
		for _, mt := range mf.Metric {
			h := mt.GetHistogram()
			if h.GetSampleCount() != 0 && h.GetSampleSum() != float64(len(body)) {
				t.Errorf("observed a %d-byte body as %v bytes", len(body), h.GetSampleSum())
			}
		}
	}
}
