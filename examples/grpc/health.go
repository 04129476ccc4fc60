package main

import (
	"context"

	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

// healthService is grpc-go's health service (the whole server SERVING until the shutdown
// begins, NOT_SERVING then) whose Watch streams end with UNAVAILABLE when the shutdown begins,
// rather than holding the server until the grace period's end: grpc-go's own Watch ends only
// with its request's context, which lasts as long.
type healthService struct {
	*health.Server
	stopping context.Context // done once the server's shutdown has begun
}

// Watch is the health service's, ended when the shutdown begins.
func (h healthService) Watch(req *healthpb.HealthCheckRequest, stream healthpb.Health_WatchServer) error {
	ctx, cancel := context.WithCancel(stream.Context())
	defer cancel()
	defer context.AfterFunc(h.stopping, cancel)()
	err := h.Server.Watch(req, &watchStream{stream, ctx})
	if h.stopping.Err() != nil {
		return errStopping
	}
	return err
}

// A watchStream is a Watch stream whose context is ctx.
type watchStream struct {
	healthpb.Health_WatchServer
	ctx context.Context
}

func (w *watchStream) Context() context.Context { return w.ctx }
