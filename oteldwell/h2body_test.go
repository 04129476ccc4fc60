package oteldwell_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/dwellhttp/dwell/core/coretest"
	"github.com/dwellhttp/dwell/oteldwell"
	"github.com/dwellhttp/dwell/router"
)

// TestH2BodyOfNoLength: an HTTP/2 body without content-length, of no size the core reports,
// is not recorded (as a chunked one is not), rather than recorded as none.
func TestH2BodyOfNoLength(t *testing.T) {
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
	tr := &http.Transport{Protocols: new(http.Protocols)}
	tr.Protocols.SetUnencryptedHTTP2(true)
	defer tr.CloseIdleConnections()
	req, _ := http.NewRequest("POST", url+"/todos", io.NopCloser(strings.NewReader(strings.Repeat("x", 1000))))
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	coretest.Receive(t, "the response's end", done)
	if resp.ProtoMajor != 2 {
		t.Fatalf("the request went over %s", resp.Proto)
	}
	m, ok := collect(t, reader)["http.server.request.body.size"]
	if !ok {
		return // not recorded at all
	}
	for k, v := range histogramSums(t, m) {
		if v != 1000 {
			t.Errorf("%s: sum %d, want 1000 (or no observation)", k, v)
		}
	}
}
