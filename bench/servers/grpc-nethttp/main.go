// Command grpc-nethttp is grpc-go behind net/http for the gRPC figures: the feed and health
// services of internal/grpcfeed through grpc.Server's ServeHTTP, on net/http's server with h2c
// (http.Protocols' UnencryptedHTTP2), beside a REST route, GET /hello, on the same port — what
// a Go service that mixes the two on net/http runs.
package main

import (
	"io"
	"log"
	"net"
	"net/http"
	"strings"

	"github.com/dwellhttp/dwell/bench/internal/grpcfeed"
	"github.com/dwellhttp/dwell/bench/internal/peer"
)

func main() {
	f := peer.ParseFlags()
	gs := grpcfeed.NewServer()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /hello", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, peer.Hello)
	})
	var p http.Protocols
	p.SetHTTP1(true)
	p.SetHTTP2(true)
	p.SetUnencryptedHTTP2(true)
	srv := &http.Server{Protocols: &p, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ProtoMajor == 2 && strings.HasPrefix(r.Header.Get("Content-Type"), "application/grpc") {
			gs.ServeHTTP(w, r)
			return
		}
		mux.ServeHTTP(w, r)
	})}
	ln, err := net.Listen("tcp", f.Addr)
	if err != nil {
		log.Fatal(err)
	}
	go func() {
		if err := srv.Serve(ln); err != http.ErrServerClosed {
			log.Fatal(err)
		}
	}()
	peer.Ready(ln.Addr().String())
	peer.WaitForStop()
	srv.Close()
}
