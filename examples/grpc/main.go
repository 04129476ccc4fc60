// Command grpc serves gRPC on dwell: grpc-go's server runs through the net/http bridge
// (package nethttp) on dwell's HTTP/2 streams — h2c with prior knowledge on a plain port, h2 by
// ALPN with -cert and -key — with the standard health service (grpc.health.v1, reporting
// SERVING) and server reflection registered, so that grpcurl, grpc_health_probe and any gRPC
// client find their way.
//
//	go run . -addr 127.0.0.1:8080
//	grpcurl -plaintext 127.0.0.1:8080 list
//	grpcurl -plaintext 127.0.0.1:8080 grpc.health.v1.Health/Check
//
// It is a module of its own so that dwell's main module does not depend on gRPC.
package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/nethttp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/reflection"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "address to listen on")
	loops := flag.Int("loops", 0, "number of event loops (0: one per CPU)")
	certFile := flag.String("cert", "", "certificate file (PEM): serve gRPC over TLS, with -key")
	keyFile := flag.String("key", "", "private key file (PEM) of -cert")
	flag.Parse()

	opts := core.Options{Addr: *addr, Loops: *loops}
	scheme := "http"
	if *certFile != "" || *keyFile != "" {
		cert, err := tls.LoadX509KeyPair(*certFile, *keyFile)
		if err != nil {
			log.Fatal(err)
		}
		opts.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}}
		scheme = "https"
	}
	gs, hs := newGRPCServer()
	srv := core.NewServer(nethttp.Handler(gs), opts)
	if err := srv.Listen(); err != nil {
		log.Fatal(err)
	}
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGINT, syscall.SIGTERM)
	fmt.Printf("listening %s://%s\n", scheme, srv.Addr())

	go func() {
		<-stop
		hs.Shutdown() // health checks say NOT_SERVING while the streams under way finish
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			log.Printf("shutdown: %v", err)
		}
	}()
	if err := srv.ListenAndServe(); !errors.Is(err, core.ErrServerClosed) {
		log.Fatal(err)
	}
}

// newGRPCServer returns a gRPC server with the health service (the whole server SERVING) and
// reflection registered: the services an application adds go beside them. Served through the
// bridge (grpc.Server is an http.Handler), it runs each call's handler on a goroutine of the
// bridge's pool, as net/http would.
func newGRPCServer() (*grpc.Server, *health.Server) {
	gs := grpc.NewServer()
	hs := health.NewServer()
	hs.SetServingStatus("", healthpb.HealthCheckResponse_SERVING)
	healthpb.RegisterHealthServer(gs, hs)
	reflection.Register(gs)
	return gs, hs
}
