// Command chatcluster is examples/chat run as any number of instances behind a load balancer:
// the same API and page, over a topic kept in a NATS JetStream stream. POST /messages stores a
// message in the stream; GET /messages?after=N, GET /events and the WebSocket of GET
// /ws?after=N answer with what came after N, whichever instance it was posted to, and wait for
// the next message when nothing did.
//
//	nats-server -js &
//	chatcluster -addr 127.0.0.1:8081 &
//	chatcluster -addr 127.0.0.1:8082 &
//
// A message posted to one instance wakes the polls parked on all of them, and reaches their
// WebSockets; a client may poll (or reconnect its socket to) any instance with its cursor (the
// stream's sequence numbers mean the same everywhere); an instance that starts serves the whole
// history from the stream. While NATS is unreachable a post gets 503 and waiting polls stay
// parked; once it is back they go on, without a restart.
//
// The answers name the stream's epoch, its creation time (see examples/internal/chatapi). A
// stream deleted and created again starts its numbering over: the instances notice (NATS
// advises them, and they look every 10 s in case they missed it), follow the new stream, and
// wake their polls with the new epoch (and tell their sockets, which close), so that the pages
// read the new history from its start. Until the stream is back, posts get 503.
//
// -cert FILE -key FILE (a certificate and its key, PEM) serve HTTPS instead of HTTP, for a load
// balancer that passes TLS through rather than ending it.
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
	"github.com/dwellhttp/dwell/examples/internal/chatpage"
	"github.com/dwellhttp/dwell/router"
	"github.com/nats-io/nats.go"
	natsjs "github.com/nats-io/nats.go/jetstream"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "address to listen on")
	loops := flag.Int("loops", 0, "number of event loops (0: one per CPU)")
	natsURL := flag.String("nats", nats.DefaultURL, "NATS server URL (comma-separated for a cluster)")
	stream := flag.String("stream", "chat", "JetStream stream of the messages, created if missing")
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

	nc, err := nats.Connect(*natsURL,
		nats.Name("chatcluster"),
		nats.ReconnectBufSize(-1), // a post that failed is never sent later
		nats.MaxReconnects(-1))    // NATS may be away for a while: keep trying
	if err != nil {
		log.Fatalf("connecting to NATS at %s: %v", *natsURL, err)
	}
	defer nc.Close()
	ch, err := openChat(nc, *stream)
	if err != nil {
		log.Fatal(err)
	}
	defer ch.close()

	srv := core.NewServer(ch.handler(), opts)
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
		// Polls and event streams end at once with "nothing yet" (their clients poll again,
		// at another instance); posts being stored get a short grace.
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

// openChat follows the stream's messages, creating the stream when it is missing, and watches
// the stream's life (stream.go): a stream deleted and created again is followed anew.
func openChat(nc *nats.Conn, stream string) (*chat, error) {
	ctx, cancel := context.WithTimeout(context.Background(), openTimeout)
	defer cancel()
	js, err := natsjs.New(nc)
	if err != nil {
		return nil, err
	}
	ch := &chat{nc: nc, js: js, stream: stream, subject: stream + ".messages",
		kick: make(chan struct{}, 1), stop: make(chan struct{}), watched: make(chan struct{})}
	if _, err := js.Stream(ctx, stream); errors.Is(err, natsjs.ErrStreamNotFound) {
		_, err = js.CreateStream(ctx, natsjs.StreamConfig{
			Name:     stream,
			Subjects: []string{ch.subject},
			Storage:  natsjs.FileStorage,
		})
		if err != nil && !errors.Is(err, natsjs.ErrStreamNameAlreadyInUse) { // another instance was first
			return nil, fmt.Errorf("creating stream %q: %w", stream, err)
		}
	} else if err != nil {
		return nil, fmt.Errorf("stream %q: %w", stream, err)
	}
	// Subscribed before the first generation opens, so that no recreation goes unnoticed
	// between the two. NATS sends these advisories to every subscriber of the account.
	ch.sub, err = nc.Subscribe("$JS.EVENT.ADVISORY.STREAM.*."+stream, func(*nats.Msg) { ch.check() })
	if err != nil {
		return nil, err
	}
	g, err := ch.open(ctx)
	if err != nil {
		ch.sub.Unsubscribe()
		return nil, err
	}
	ch.gen.Store(g)
	go ch.watch()
	return ch, nil
}

// close stops watching the stream and closes the Topic, once the server has shut down (no
// request uses the Topic any more), and before the NATS connection.
func (ch *chat) close() {
	ch.sub.Unsubscribe()
	close(ch.stop)
	<-ch.watched
	if g := ch.gen.Load(); g.end() {
		g.topic.Close()
	}
}

// handler routes the chat's endpoints.
func (ch *chat) handler() core.Handler {
	r := router.New()
	r.GET("/", chatpage.Serve)
	r.POST("/messages", ch.post)
	r.GET("/messages", ch.poll)
	r.GET("/events", ch.events)
	r.GET("/ws", ch.socket) // socket.go
	return r.Handler()
}
