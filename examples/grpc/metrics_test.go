package main

import (
	"io"
	"net/http"
	"regexp"
	"strconv"
	"testing"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/core/coretest"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

// TestMetricsNameMethods: the request metrics of gRPC calls carry their method as the route —
// two Publish calls, one Health/Check, a Follow stream ended by its client — each counted
// under its own series, apart from the HTTP routes'.
func TestMetricsNameMethods(t *testing.T) {
	msgs, err := openLog("", 10)
	if err != nil {
		t.Fatal(err)
	}
	a := newApp(msgs)
	srv, addr := coretest.Serve(t, a.handler(), core.Options{})
	a.serve(srv)
	conn := dialGRPC(t, addr)
	publishGRPC(t, conn, "one")
	publishGRPC(t, conn, "two")
	if _, err := healthpb.NewHealthClient(conn).Check(t.Context(), &healthpb.HealthCheckRequest{}); err != nil {
		t.Fatal(err)
	}
	stream := follow(t, conn, 0)
	if got := receive(t, stream, 2); got != "1:one 2:two" {
		t.Fatalf("Follow: %s", got)
	}
	publishHTTP(t, addr, "three")

	want := map[string]int{
		"/dwell.example.feed.Feed/Publish": 2,
		"/grpc.health.v1.Health/Check":     1,
		"/messages":                        1,
	}
	coretest.WaitFor(t, "the calls counted", func() bool {
		text := scrape(t, addr)
		for route, n := range want {
			if count(text, route) != n {
				return false
			}
		}
		return true
	})
	// A stream is counted when it ends: the client cancels it.
	_ = stream.CloseSend()
	conn.Close()
	coretest.WaitFor(t, "the stream counted", func() bool {
		return count(scrape(t, addr), "/dwell.example.feed.Feed/Follow") == 1
	})
}

// scrape returns the text of GET /metrics.
func scrape(t *testing.T, addr string) string {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("/metrics: %d %v", resp.StatusCode, err)
	}
	return string(b)
}

// count returns how many requests of route the duration histogram has counted (-1: none).
func count(text, route string) int {
	re := regexp.MustCompile(`(?m)^http_server_request_duration_seconds_count\{[^}]*http_route="` +
		regexp.QuoteMeta(route) + `"[^}]*\} (\d+)$`)
	n := -1
	for _, m := range re.FindAllStringSubmatch(text, -1) {
		v, _ := strconv.Atoi(m[1])
		n = max(n, 0) + v
	}
	return n
}
