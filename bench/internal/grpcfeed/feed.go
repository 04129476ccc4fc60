// Package grpcfeed is the gRPC service of the gRPC figures' servers (bench/servers/grpc-*): the
// feed of examples/grpc (its feedpb: a unary Publish, a server-streaming Follow from a cursor)
// over an in-memory wait.Topic, followed with NextContext, and grpc-go's health service, for the
// unary calls the figures time. Every contender serves the same service; they differ only in
// the server that carries it.
package grpcfeed

import (
	"context"

	"github.com/dwellhttp/dwell/examples/grpc/feedpb"
	"github.com/dwellhttp/dwell/wait"
	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
)

// NewServer returns a grpc-go server with the feed and the health service (SERVING).
func NewServer() *grpc.Server {
	gs := grpc.NewServer()
	hs := health.NewServer()
	hs.SetServingStatus("", healthpb.HealthCheckResponse_SERVING)
	healthpb.RegisterHealthServer(gs, hs)
	feedpb.RegisterFeedServer(gs, &feed{topic: wait.NewTopic[*feedpb.Message](1000)})
	return gs
}

type feed struct {
	feedpb.UnimplementedFeedServer
	topic *wait.Topic[*feedpb.Message]
}

func (f *feed) Publish(_ context.Context, req *feedpb.PublishRequest) (*feedpb.PublishReply, error) {
	seq := f.topic.PublishFunc(func(seq uint64) *feedpb.Message { return &feedpb.Message{Seq: seq, Text: req.Text} })
	return &feedpb.PublishReply{Seq: seq}, nil
}

func (f *feed) Follow(req *feedpb.FollowRequest, stream feedpb.Feed_FollowServer) error {
	after := req.After
	for {
		msgs, last, err := f.topic.NextContext(stream.Context(), after)
		if err != nil && err != wait.ErrMissed {
			return status.FromContextError(err).Err()
		}
		for _, m := range msgs {
			if err := stream.Send(m); err != nil {
				return err
			}
		}
		after = last
	}
}
