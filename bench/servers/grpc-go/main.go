// Command grpc-go is grpc-go's own server for the gRPC figures: the feed and health services of
// internal/grpcfeed on grpc.Server.Serve, HTTP/2 with prior knowledge on a plain port, its
// defaults. It serves gRPC alone: no REST route.
package main

import (
	"log"
	"net"

	"github.com/dwellhttp/dwell/bench/internal/grpcfeed"
	"github.com/dwellhttp/dwell/bench/internal/peer"
)

func main() {
	f := peer.ParseFlags()
	ln, err := net.Listen("tcp", f.Addr)
	if err != nil {
		log.Fatal(err)
	}
	gs := grpcfeed.NewServer()
	go func() {
		if err := gs.Serve(ln); err != nil {
			log.Fatal(err)
		}
	}()
	peer.Ready(ln.Addr().String())
	peer.WaitForStop()
	gs.Stop()
}
