package main

import (
	"context"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/examples/grpc/feedpb"
	"github.com/dwellhttp/dwell/router"
	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/reflection"
)

// An app is the service: the feed over gRPC (beside the health service and reflection) and
// over HTTP, on one port.
type app struct {
	log    *messageLog
	grpc   *grpc.Server
	health *health.Server
	rest   *rest
	// stop ends the streams under way (Follow, Health/Watch): the server's shutdown hook.
	stop context.CancelFunc
}

// newApp makes the service over the log, its gRPC server made with opts (interceptors, limits).
func newApp(log *messageLog, opts ...grpc.ServerOption) *app {
	stopping, stop := context.WithCancel(context.Background())
	a := &app{log: log, grpc: grpc.NewServer(opts...), health: health.NewServer(), rest: newREST(log), stop: stop}
	a.health.SetServingStatus("", healthpb.HealthCheckResponse_SERVING)
	healthpb.RegisterHealthServer(a.grpc, healthService{a.health, stopping})
	feedpb.RegisterFeedServer(a.grpc, &feedService{log: log, stopping: stopping})
	reflection.Register(a.grpc)
	return a
}

// handler routes the requests: each gRPC method on a route of its own, /package.Service/Method
// (so that access logs, metrics and traces name the method), to grpc-go's server through the
// net/http bridge, which runs each call on a goroutine of its pool, as net/http would; the
// feed's HTTP routes beside them.
func (a *app) handler() core.Handler {
	r := router.New()
	for service, info := range a.grpc.GetServiceInfo() {
		for _, m := range info.Methods {
			r.HandleHTTP("POST", "/"+service+"/"+m.Name, a.grpc)
		}
	}
	r.POST("/messages", a.rest.publish)
	r.GET("/messages", a.rest.poll)
	r.GET("/messages/ws", a.rest.socket)
	return r.Handler()
}

// serve makes srv's shutdown reach what the server cannot end itself: when it begins, the
// health service says NOT_SERVING and the streams end with UNAVAILABLE, at once rather than at
// the grace period's end, while the unary calls under way finish.
func (a *app) serve(srv *core.Server) {
	srv.RegisterOnShutdown(func() {
		a.health.Shutdown()
		a.stop()
	})
}
