package promdwell_test

import (
	"bufio"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strings"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/promdwell"
	"github.com/dwellhttp/dwell/router"
	"github.com/prometheus/client_golang/prometheus"
)

// A service with its request metrics and the server's statistics at /metrics.
func Example() {
	reg := prometheus.NewRegistry()
	r := router.New()
	r.Use(promdwell.NewMetrics(reg).Middleware)
	r.GET("/todos/:id", func(c *core.Ctx) { c.WriteString("{}") })
	r.GET("/metrics", promdwell.Handler(reg))
	srv := core.NewServer(r.Handler(), core.Options{Addr: "127.0.0.1:0", Logger: slog.New(slog.DiscardHandler)})
	reg.MustRegister(promdwell.NewCollector(srv))
	if err := srv.Listen(); err != nil {
		panic(err)
	}
	go srv.ListenAndServe()
	defer srv.Shutdown(context.Background())
	base := "http://" + srv.Addr().String()

	for _, path := range []string{"/todos/1", "/todos/2", "/missing"} {
		resp, err := http.Get(base + path)
		if err != nil {
			panic(err)
		}
		resp.Body.Close()
	}
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if line := sc.Text(); strings.HasPrefix(line, "http_server_request_duration_seconds_count") ||
			strings.HasPrefix(line, "dwell_server_requests_total") {
			fmt.Println(line)
		}
	}
	// Output:
	// dwell_server_requests_total 4
	// http_server_request_duration_seconds_count{http_request_method="GET",http_response_status_code="200",http_route="/todos/:id",url_scheme="http"} 2
	// http_server_request_duration_seconds_count{http_request_method="GET",http_response_status_code="404",http_route="(not found)",url_scheme="http"} 1
}
