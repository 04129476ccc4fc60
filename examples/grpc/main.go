// Command grpc serves gRPC on dwell, as the template of a service that has gRPC clients and
// browsers alike: a feed of messages, published and followed from a cursor over gRPC
// (feedpb/feed.proto: a unary Publish, a server-streaming Follow) and over HTTP (a long poll, a
// WebSocket) on the same port, from the same topic, with the standard health service
// (grpc.health.v1) and server reflection, so that grpcurl, grpc_health_probe and any gRPC client
// find their way. grpc-go's server runs through the net/http bridge (package nethttp) on dwell's
// HTTP/2 streams — h2c with prior knowledge on a plain port, h2 by ALPN with -cert and -key —
// each method on a route of its own.
//
//	go run . -addr 127.0.0.1:8080 -log feed.jsonl
//	grpcurl -plaintext -d '{"text": "hello"}' 127.0.0.1:8080 dwell.example.feed.Feed/Publish
//	grpcurl -plaintext -d '{"after": 0}' 127.0.0.1:8080 dwell.example.feed.Feed/Follow
//	curl -d 'hello again' 127.0.0.1:8080/messages
//	curl '127.0.0.1:8080/messages?after=1'
//	grpcurl -plaintext 127.0.0.1:8080 grpc.health.v1.Health/Check
//
// With -log the messages are kept in a file, and their numbers go on after a restart: a client
// that follows again from the last number it received misses nothing. On SIGTERM the health
// service says NOT_SERVING, the streams under way (Follow, Health/Watch) end at once with
// UNAVAILABLE, the long polls answer and the WebSockets close with 1001, the unary calls under
// way finish, and the process exits.
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
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "address to listen on")
	loops := flag.Int("loops", 0, "number of event loops (0: one per CPU)")
	certFile := flag.String("cert", "", "certificate file (PEM): serve gRPC over TLS, with -key")
	keyFile := flag.String("key", "", "private key file (PEM) of -cert")
	logFile := flag.String("log", "", "file of the messages, kept across restarts (none: memory alone)")
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
	msgs, err := openLog(*logFile, 1000)
	if err != nil {
		log.Fatal(err)
	}
	defer msgs.close()
	a := newApp(msgs)
	srv := core.NewServer(a.handler(), opts)
	a.serve(srv)
	if err := srv.Listen(); err != nil {
		log.Fatal(err)
	}
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGINT, syscall.SIGTERM)
	fmt.Printf("listening %s://%s\n", scheme, srv.Addr())

	go func() {
		<-stop
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
