package main

import (
	"context"
	"net"
	"os"
	"strconv"
	"testing"

	"github.com/dwellhttp/dwell/bench/internal/grpcfeed"
)

// TestGRPCStreams runs grpc-streams against an in-process grpc-go server of the feed: the
// unary probes are timed with and without the streams, and the streams receive what is
// published meanwhile.
func TestGRPCStreams(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gs := grpcfeed.NewServer()
	go gs.Serve(ln)
	t.Cleanup(gs.Stop)
	v, err := runGRPCStreams(context.Background(), []string{"-addr", ln.Addr().String(), "-pid", strconv.Itoa(os.Getpid()),
		"-streams", "30", "-conns", "4", "-c", "2", "-d", "500ms", "-publish", "20"})
	if err != nil {
		t.Fatal(err)
	}
	res := v.(*grpcStreamsResult)
	if res.Streams != 30 || res.Unary <= 0 || res.UnaryBase <= 0 || res.UnaryRPS <= 0 || res.RSS <= 0 || res.Published == 0 || res.Lost != 0 || res.FanoutMs <= 0 {
		t.Fatalf("%+v", res)
	}
}
