package main

import (
	"context"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/examples/grpc/feedpb"
	"github.com/dwellhttp/dwell/nethttp"
	"github.com/dwellhttp/dwell/promdwell"
	"github.com/dwellhttp/dwell/router"
	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/reflection"
)

// An app is the service: the feed over gRPC (beside the health service and reflection) and
// over HTTP, on one port, and its metrics.
type app struct {
	log    *messageLog
	grpc   *grpc.Server
	health *health.Server
	rest   *rest
	// streams are the places of the gRPC streams, which hold theirs for as long as they last:
	// a pool of their own, so that they never take those the unary calls and the other bridged
	// routes need (nethttp's default pool).
	streams *nethttp.Pool
	metrics *prometheus.Registry
	// stop ends the streams under way (Follow, Health/Watch): the server's shutdown hook.
	stop context.CancelFunc
}

// newApp makes the service over the log, its gRPC server made with opts (interceptors, limits).
func newApp(log *messageLog, opts ...grpc.ServerOption) *app {
	stopping, stop := context.WithCancel(context.Background())
	a := &app{log: log, grpc: grpc.NewServer(opts...), health: health.NewServer(), rest: newREST(log),
		streams: nethttp.NewPool(maxStreams), metrics: prometheus.NewRegistry(), stop: stop}
	a.health.SetServingStatus("", healthpb.HealthCheckResponse_SERVING)
	healthpb.RegisterHealthServer(a.grpc, healthService{a.health, stopping})
	feedpb.RegisterFeedServer(a.grpc, &feedService{log: log, stopping: stopping})
	reflection.Register(a.grpc)
	return a
}

// maxStreams bounds the gRPC streams open at once: each holds a goroutine of the bridge's.
const maxStreams = 100_000

// handler routes the requests: each gRPC method on a route of its own, /package.Service/Method,
// so that access logs, metrics and traces name the method, to grpc-go's server through the
// net/http bridge, which runs each call on a goroutine of a pool, as net/http would — the
// streaming methods in a pool of their own; the feed's HTTP routes and the metrics beside them.
func (a *app) handler() core.Handler {
	r := router.New()
	r.Use(promdwell.NewMetrics(a.metrics).Middleware)
	for service, info := range a.grpc.GetServiceInfo() {
		for _, m := range info.Methods {
			h := nethttp.Handler(a.grpc)
			if m.IsClientStream || m.IsServerStream {
				h = a.streams.Handler(a.grpc)
			}
			r.POST("/"+service+"/"+m.Name, h)
		}
	}
	r.GET("/metrics", promdwell.Handler(a.metrics))
	r.POST("/messages", a.rest.publish)
	r.GET("/messages", a.rest.poll)
	r.GET("/messages/ws", a.rest.socket)
	return r.Handler()
}

// serve registers srv's statistics with the metrics, and makes srv's shutdown reach what the server cannot end itself: when it begins, the
// health service says NOT_SERVING and the streams end with UNAVAILABLE, at once rather than at
// the grace period's end, while the unary calls under way finish.
func (a *app) serve(srv *core.Server) {
	a.metrics.MustRegister(promdwell.NewCollector(srv))
	srv.RegisterOnShutdown(func() {
		a.health.Shutdown()
		a.stop()
	})
}
