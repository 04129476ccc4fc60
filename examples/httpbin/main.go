// Command httpbin is an httpbin-style service on dwell: it echoes requests, answers with chosen
// statuses and sizes, streams and delays. It is dwell's showcase and a conformance target.
//
//	go run ./examples/httpbin -addr 127.0.0.1:8080
//
// Endpoints:
//
//	ANY  /anything, /anything/*rest  the request as JSON, its body hashed while it streams
//	GET  /status/:code               that status (200–599), empty body
//	GET  /bytes/:n                   n bytes (byte i is 'a'+i%26), with a Content-Length
//	GET  /stream-bytes/:n            the same bytes, chunked
//	GET  /delay/:ms                  answers after ms (0–10000), without holding a coroutine
//	GET  /drip?bytes=N&ms=M          N bytes of '*' spread over M ms, in flushed pieces
package main

import (
	"context"
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
	maxBody := flag.Int64("max-body", 16<<20, "largest request body in bytes")
	idle := flag.Duration("idle-timeout", 5*time.Second, "how long a keep-alive connection may wait for its next request")
	header := flag.Duration("header-timeout", 5*time.Second, "how long a request head may take to arrive")
	flag.Parse()

	srv := core.NewServer(newHandler(), core.Options{
		Addr:           *addr,
		Loops:          *loops,
		MaxHeaderBytes: 16 << 10,
		MaxBodyBytes:   *maxBody,
		IdleTimeout:    *idle,
		HeaderTimeout:  *header,
	})
	if err := srv.Listen(); err != nil {
		log.Fatal(err)
	}
	// Signals are caught before the server says it is ready, so that one sent right after
	// the announcement shuts it down gracefully rather than killing it.
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGINT, syscall.SIGTERM)
	fmt.Printf("listening http://%s\n", srv.Addr())

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
