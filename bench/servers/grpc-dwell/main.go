// Command grpc-dwell is dwell's server for the gRPC figures, set up as examples/grpc is: the feed
// and health services of internal/grpcfeed through the net/http bridge, each method on a route
// of its own, the streaming ones in a nethttp.Pool of their own, beside a REST route, GET
// /hello, answered by a dwell handler, on the same port (h2c with prior knowledge, dwell's
// default).
package main

import (
	"context"
	"log"
	"time"

	"github.com/dwellhttp/dwell/bench/internal/grpcfeed"
	"github.com/dwellhttp/dwell/bench/internal/peer"
	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/nethttp"
	"github.com/dwellhttp/dwell/router"
)

func main() {
	f := peer.ParseFlags()
	gs := grpcfeed.NewServer()
	streams := nethttp.NewPool(100_000)
	r := router.New()
	r.GET("/hello", func(c *core.Ctx) {
		c.SetHeader("Content-Type", "text/plain")
		c.WriteString(peer.Hello)
	})
	for service, info := range gs.GetServiceInfo() {
		for _, m := range info.Methods {
			h := nethttp.Handler(gs)
			if m.IsClientStream || m.IsServerStream {
				h = streams.Handler(gs)
			}
			r.POST("/"+service+"/"+m.Name, h)
		}
	}
	srv := core.NewServer(r.Handler(), core.Options{Addr: f.Addr})
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
