package main

import (
	"context"
	"errors"

	"github.com/dwellhttp/dwell/examples/grpc/feedpb"
	"github.com/dwellhttp/dwell/wait"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// errStopping ends the streams under way when the server's shutdown begins: the client follows
// again, from the last message it received, at another instance or once this one is back.
var errStopping = status.Error(codes.Unavailable, "the server is shutting down")

// feedService is the gRPC face of the feed (feedpb/feed.proto). Its methods run on goroutines
// of the net/http bridge, so they block as gRPC handlers do: Follow waits on the topic with
// NextContext, which holds no goroutine of dwell's beyond the bridge's own.
type feedService struct {
	feedpb.UnimplementedFeedServer
	log *messageLog
	// stopping is done once the server's shutdown has begun (core.Server.RegisterOnShutdown):
	// the streams end then, where the requests' contexts would last the grace period.
	stopping context.Context
}

// Publish adds a message.
func (s *feedService) Publish(_ context.Context, req *feedpb.PublishRequest) (*feedpb.PublishReply, error) {
	if req.Text == "" || len(req.Text) > maxText {
		return nil, status.Errorf(codes.InvalidArgument, "text must be 1 to %d bytes", maxText)
	}
	seq, err := s.log.publish(req.Text)
	if err != nil {
		return nil, status.Errorf(codes.Internal, "storing the message: %v", err)
	}
	return &feedpb.PublishReply{Seq: seq}, nil
}

// Follow sends the messages after the client's cursor, then each one as it comes, until the
// client cancels, or the shutdown begins (UNAVAILABLE).
func (s *feedService) Follow(req *feedpb.FollowRequest, stream feedpb.Feed_FollowServer) error {
	ctx, cancel := context.WithCancel(stream.Context())
	defer cancel()
	defer context.AfterFunc(s.stopping, cancel)()
	after := req.After
	for {
		msgs, last, err := s.log.topic.NextContext(ctx, after)
		switch {
		case s.stopping.Err() != nil:
			return errStopping
		case err != nil && !errors.Is(err, wait.ErrMissed):
			return status.FromContextError(err).Err()
		}
		// ErrMissed comes with what the log still has: the log here keeps every message,
		// so it never does.
		for _, m := range msgs {
			if err := stream.Send(&feedpb.Message{Seq: m.Seq, Text: m.Text}); err != nil {
				return err
			}
		}
		after = last
	}
}
