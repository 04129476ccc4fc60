// Command nethttp is the net/http peer of the dwell benchmarks: the standard library server with
// its defaults, one goroutine per connection. With -cert and -key it serves HTTPS with ServeTLS
// (what ListenAndServeTLS does, on the listener it opened first; -curves picks the key
// exchange), for the HTTPS figures. Over TLS it offers HTTP/2 by ALPN, net/http's default;
// -h2c adds HTTP/2 with prior knowledge on plaintext (http.Protocols' UnencryptedHTTP2), for the
// HTTP/2 figures only, so that the HTTP/1.1 figures keep the server's defaults. -write-timeout
// sets http.Server.WriteTimeout (the zero-window abuse figure's; over HTTP/2 it is each
// stream's, from its start, and a stream past it is reset).
package main

import (
	"context"
	"flag"
	"io"
	"log"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/dwellhttp/dwell/bench/internal/peer"
)

func main() {
	tf := peer.RegisterTLSFlags()
	h2c := flag.Bool("h2c", false, "also serve HTTP/2 with prior knowledge (h2c) on plaintext")
	wt := flag.Duration("write-timeout", 0, "http.Server.WriteTimeout (0: none, net/http's default)")
	f := peer.ParseFlags()
	gate := peer.NewGate()
	bufs := sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

	mux := http.NewServeMux()
	mux.HandleFunc("GET /hello", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, peer.Hello)
	})
	mux.Handle("GET /std/hello", peer.StdHello)
	mux.Handle("GET /fs/", http.StripPrefix("/fs/", http.FileServerFS(peer.Assets)))
	mux.HandleFunc("GET /file", func(w http.ResponseWriter, r *http.Request) {
		http.ServeFile(w, r, f.File)
	})
	mux.HandleFunc("POST /upload", func(w http.ResponseWriter, r *http.Request) {
		buf := bufs.Get().(*[]byte)
		defer bufs.Put(buf)
		n, err := peer.Count(r.Body, *buf)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, strconv.FormatInt(n, 10))
	})
	mux.HandleFunc("GET /poll", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-gate.Wait():
		case <-r.Context().Done():
			return
		}
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, peer.Released)
	})
	mux.HandleFunc("POST /release", func(w http.ResponseWriter, r *http.Request) {
		gate.Release()
		io.WriteString(w, "ok")
	})
	mux.HandleFunc("GET /download", func(w http.ResponseWriter, r *http.Request) {
		n, err := peer.DownloadSize(r.URL.Query().Get("n"))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("Content-Length", strconv.FormatInt(n, 10))
		io.Copy(w, peer.NewPayload(n))
	})

	ln, err := net.Listen("tcp", f.Addr)
	if err != nil {
		log.Fatal(err)
	}
	srv := &http.Server{Handler: mux, WriteTimeout: *wt}
	if *h2c {
		var p http.Protocols
		p.SetHTTP1(true)
		p.SetHTTP2(true)
		p.SetUnencryptedHTTP2(true)
		srv.Protocols = &p
	}
	if tf.Enabled() {
		srv.TLSConfig = tf.Config()
	}
	go func() {
		var err error
		if tf.Enabled() {
			err = srv.ServeTLS(ln, tf.Cert, tf.Key)
		} else {
			err = srv.Serve(ln)
		}
		if err != http.ErrServerClosed {
			log.Fatal(err)
		}
	}()
	if tf.Enabled() {
		peer.ReadyTLS(ln.Addr().String())
	} else {
		peer.Ready(ln.Addr().String())
	}
	peer.WaitForStop()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		// Parked long polls never go idle, so Shutdown may time out; closing is then the answer.
		srv.Close()
	}
}
