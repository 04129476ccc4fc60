// Command websocket is a WebSocket echo server, the template of a service on dwell's native
// WebSocket package: GET /ws upgrades and sends every message back as it came — text as text,
// binary as binary, a fragmented message reassembled into one — and GET / is a page that
// talks to it.
//
//	-addr         the address to listen on (127.0.0.1:8080)
//	-compress     accept permessage-deflate (RFC 7692) when a client offers it
//	-max-message  the largest message taken, in bytes (16 MiB): a larger one closes the
//	              connection with 1009
//
// It prints "listening http://ADDR" once it listens, and shuts down gracefully on SIGINT or
// SIGTERM: open connections are closed with 1001.
//
// A connection is served in the sequential style (Accept, then ReadMessage and WriteMessage in
// turn) rather than the event style (Serve and Send), which costs less per idle connection:
// WriteMessage parks the handler while a slow client catches up, and the connection reads
// nothing more meanwhile, so that a client that sends faster than it reads is held back
// through TCP. Send never waits, and an event-style handler cannot stop the reading: an echo
// built on it would queue a flooding client's messages until its slow-client policy dropped
// them or the connection.
package main

import (
	"context"
	_ "embed" // the page
	"errors"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"runtime"
	"syscall"
	"time"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/router"
	"github.com/dwellhttp/dwell/websocket"
)

//go:embed page.html
var page []byte

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "address to listen on")
	compress := flag.Bool("compress", false, "accept permessage-deflate when a client offers it")
	maxMessage := flag.Int("max-message", 16<<20, "largest message taken, in bytes")
	flag.Parse()
	if *maxMessage <= 0 {
		log.Fatal("-max-message must be positive")
	}

	// A loop per CPU the process may use: each connection stays on the loop that accepted it.
	srv := core.NewServer(routes(options(*compress, *maxMessage)), core.Options{Addr: *addr, Loops: runtime.GOMAXPROCS(0)})
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
		// Shutdown starts the close handshake of every connection; the grace period leaves
		// clients time to answer it (Options.CloseTimeout waits 5 s for each).
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

// options are the connections' options, one Options for all of them.
func options(compress bool, maxMessage int) *websocket.Options {
	return &websocket.Options{Compress: compress, MaxMessage: int64(maxMessage)}
}

// routes serves the page at / and the echo at /ws; the router answers anything else with 404,
// or 405 with Allow.
func routes(o *websocket.Options) core.Handler {
	r := router.New()
	r.GET("/", func(cx *core.Ctx) {
		cx.SetHeader("Content-Type", "text/html; charset=utf-8")
		cx.Write(page)
	})
	r.GET("/ws", echo(o))
	return r.Handler()
}

// echo upgrades the request and echoes its messages until the connection closes. The close
// handshake, pings, the checks of frames and text and the limit are the package's: what a
// client breaks closes the connection with the code RFC 6455 gives (1002, 1007, 1009), and
// ReadMessage then returns why.
func echo(o *websocket.Options) core.Handler {
	return func(cx *core.Ctx) {
		c, err := websocket.Accept(cx, o)
		if err != nil {
			return // refused, and answered with the reason
		}
		for {
			typ, msg, err := c.ReadMessage()
			if err != nil {
				return
			}
			if c.WriteMessage(typ, msg) != nil {
				return
			}
		}
	}
}
