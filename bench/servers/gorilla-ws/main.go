// Command gorilla-ws is the gorilla/websocket peer of the WebSocket benchmarks: net/http's server
// with gorilla's echo and its chat example's broadcast hub (package gorillaws), on the routes of
// package wspeer.
package main

import (
	"context"
	"io"
	"log"
	"net"
	"net/http"
	"time"

	"github.com/dwellhttp/dwell/bench/internal/gorillaws"
	"github.com/dwellhttp/dwell/bench/internal/peer"
	"github.com/dwellhttp/dwell/bench/internal/wspeer"
)

func main() {
	addr := wspeer.ParseFlags()
	hub := gorillaws.NewHub()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /hello", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, wspeer.Hello)
	})
	mux.Handle("GET /echo", gorillaws.Echo(false))
	mux.Handle("GET /echo-deflate", gorillaws.Echo(true))
	mux.Handle("GET /broadcast", hub)
	mux.HandleFunc("GET /start", func(w http.ResponseWriter, r *http.Request) {
		p, err := wspeer.ParsePlan(r.URL.Query().Get)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		p.Start(hub.Send)
		io.WriteString(w, "ok")
	})
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		log.Fatal(err)
	}
	srv := &http.Server{Handler: mux}
	go srv.Serve(ln)
	peer.Ready(ln.Addr().String())
	peer.WaitForStop()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	srv.Shutdown(ctx)
}
