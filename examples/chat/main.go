// Command chat is a long-poll chat room. POST /messages adds a message; GET /messages?after=N
// answers with the messages after N at once, or waits for the next one (wait.Topic); GET
// /events streams the same topic as Server-Sent Events, paced by the client; GET /ws follows it
// over a WebSocket, from a cursor as the polls do; GET / is a page that chats through the
// WebSocket, or through the long polls where no WebSocket gets through. The room is
// examples/internal/chatroom, the API's messages and answers examples/internal/chatapi (its doc
// has the API), the page examples/internal/chatpage.
//
// A waiting poll parks only its own handler: thousands of them cost a few kilobytes each, and
// one message wakes them all, each on its own loop. A WebSocket waits with no coroutine at all:
// it follows the topic with a websocket.Feed, its upgrade's request detached on the topic
// between messages.
//
// Flags: -addr, -loops; -cert FILE -key FILE, a certificate and its key (PEM), serve HTTPS
// instead, the page's socket going over wss.
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
	"github.com/dwellhttp/dwell/examples/internal/chatroom"
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
	srv := core.NewServer(chatroom.New().Handler(), opts)
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
		// Polls and event streams wait for minutes; past a short grace they are ended with
		// ErrShutdown rather than waited for.
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			log.Printf("shutdown: %v", err)
		}
	}()
	if err := srv.ListenAndServe(); !errors.Is(err, core.ErrServerClosed) {
		log.Fatal(err)
	}
}
