// Command nbio is the nbio (nbhttp) peer of the dwell benchmarks: an epoll loop that parses
// requests and hands each to a goroutine pool running ordinary net/http handlers.
package main

import (
	"context"
	"io"
	"log"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/dwellhttp/dwell/bench/internal/peer"
	"github.com/lesismal/nbio/nbhttp"
)

func main() {
	f := peer.ParseFlags()
	gate := peer.NewGate()
	bufs := sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

	mux := http.NewServeMux()
	mux.HandleFunc("GET /hello", func(w http.ResponseWriter, r *http.Request) {
		text(w, peer.Hello)
	})
	mux.Handle("GET /std/hello", peer.StdHello)
	mux.Handle("GET /fs/", http.StripPrefix("/fs/", http.FileServerFS(peer.Assets)))
	mux.HandleFunc("GET /file", func(w http.ResponseWriter, r *http.Request) {
		http.ServeFile(w, r, f.File)
	})
	mux.HandleFunc("POST /upload", func(w http.ResponseWriter, r *http.Request) {
		// nbhttp calls the handler only once the whole body has arrived, held in its pooled
		// buffers; counting through Read is all a handler can do.
		buf := bufs.Get().(*[]byte)
		defer bufs.Put(buf)
		n, err := peer.Count(r.Body, *buf)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		text(w, strconv.FormatInt(n, 10))
	})
	mux.HandleFunc("GET /poll", func(w http.ResponseWriter, r *http.Request) {
		// nbhttp writes the response when the handler returns, so a long poll blocks a goroutine
		// of its handler pool, which is sized below to hold every parked request.
		<-gate.Wait()
		text(w, peer.Released)
	})
	mux.HandleFunc("POST /release", func(w http.ResponseWriter, r *http.Request) {
		gate.Release()
		text(w, "ok")
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

	engine := nbhttp.NewEngine(nbhttp.Config{
		Network: "tcp",
		Addrs:   []string{f.Addr},
		Handler: mux,
		// The default pool (1024 goroutines per CPU) would queue parked polls past the first
		// thousand instead of running them, which hides their cost; 64Ki lets each park hold
		// its goroutine as it would in production with enough load to fill the pool.
		MessageHandlerPoolSize: 64 << 10,
		// The parser keeps a request's unparsed bytes, body included, until the request is
		// complete, and refuses more than ReadLimit (64 MiB by default); the upload figure sends
		// 512 MiB.
		ReadLimit: 1 << 30,
	})
	if err := engine.Start(); err != nil {
		log.Fatal(err)
	}
	peer.Ready(f.Addr)
	peer.WaitForStop()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	engine.Shutdown(ctx)
}

// text writes a short text/plain body. nbhttp, unlike net/http, does not buffer a small body to
// compute its length: without an explicit Content-Length every answer goes out chunked.
func text(w http.ResponseWriter, s string) {
	h := w.Header()
	h.Set("Content-Type", "text/plain")
	h.Set("Content-Length", strconv.Itoa(len(s)))
	io.WriteString(w, s)
}
