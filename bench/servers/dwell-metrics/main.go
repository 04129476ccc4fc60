// Command dwell-metrics is dwell-mw with the Prometheus metrics middleware of promdwell added:
// a request id, the request's metrics, an access log (one JSON line per response through
// middleware.LogHandler, buffered, to the -accesslog file: /dev/null unless set, see
// peer.Flags) and panic recovery, and the server's statistics collected for /metrics. It
// serves GET /hello only: it is measured on the hello figure and the allocations row, beside
// dwell and dwell-mw, to show what metrics cost per request.
package main

import (
	"context"
	"log"
	"log/slog"
	"time"

	"github.com/dwellhttp/dwell/bench/internal/peer"
	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/middleware"
	"github.com/dwellhttp/dwell/promdwell"
	"github.com/dwellhttp/dwell/router"
	"github.com/prometheus/client_golang/prometheus"
)

func main() {
	f := peer.ParseFlags()
	logs := middleware.NewLogHandler(f.OpenAccessLog(), nil)
	defer logs.Close()
	reg := prometheus.NewRegistry()
	srv := core.NewServer(routes(reg, slog.New(logs)), core.Options{Addr: f.Addr})
	reg.MustRegister(promdwell.NewCollector(srv))
	if err := srv.Listen(); err != nil {
		log.Fatal(err)
	}
	go func() {
		if err := srv.ListenAndServe(); err != core.ErrServerClosed {
			log.Fatal(err)
		}
	}()
	peer.Ready(srv.Addr().String())
	peer.WaitForStop()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	srv.Shutdown(ctx)
}

// routes is /hello behind the request id, the metrics, the access log and recovery, as a
// service would stack them, and /metrics.
func routes(reg *prometheus.Registry, logger *slog.Logger) core.Handler {
	r := router.New()
	r.Use(middleware.AssignRequestID, promdwell.NewMetrics(reg).Middleware, middleware.AccessLog(logger),
		middleware.Recover(middleware.JSONError))
	r.GET("/hello", func(c *core.Ctx) {
		c.SetHeader("Content-Type", "text/plain")
		c.WriteString(peer.Hello)
	})
	r.GET("/metrics", promdwell.Handler(reg))
	return r.Handler()
}
