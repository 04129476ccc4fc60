// Command hello is the smallest dwell server: GET / answers "Hello World", through the
// router, as the README shows.
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
	"github.com/dwellhttp/dwell/router"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "address to listen on")
	loops := flag.Int("loops", 0, "number of event loops (0: one per CPU)")
	certFile := flag.String("cert", "", "certificate file (PEM): serve HTTPS, with -key")
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
	srv := core.NewServer(routes(), opts)
	if err := srv.Listen(); err != nil {
		log.Fatal(err)
	}
	// Signals are caught before the server says it is ready, so that one sent right after
	// the announcement shuts it down gracefully rather than killing it.
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

// routes is the server's one route: GET / (and HEAD /); the router answers anything else with
// 404, or 405 with Allow.
func routes() core.Handler {
	r := router.New()
	r.GET("/", hello)
	return r.Handler()
}

func hello(c *core.Ctx) {
	c.SetHeader("Content-Type", "text/plain")
	c.WriteString("Hello World")
}
