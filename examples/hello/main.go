// Command hello is the smallest dwell server: GET / answers "Hello World".
package main

import (
	"context"
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
	loops := flag.Int("loops", 1, "number of event loops")
	flag.Parse()

	srv := core.NewServer(hello, core.Options{Addr: *addr, Loops: *loops})
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
		srv.Shutdown(ctx)
	}()
	if err := srv.ListenAndServe(); err != core.ErrServerClosed {
		log.Fatal(err)
	}
}

func hello(c *core.Ctx) {
	if c.Path() != "/" {
		c.SetStatus(404)
		c.WriteString("404 page not found\n")
		return
	}
	c.SetHeader("Content-Type", "text/plain")
	c.WriteString("Hello World")
}
