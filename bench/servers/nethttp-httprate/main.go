// Command nethttp-httprate is the net/http peer of the rate-limit figures: GET /hello as
// servers/nethttp answers it, and the same answer behind github.com/go-chi/httprate's
// LimitByIP, the limiter chi's users take, at /limited/hello with a limit no benchmark reaches
// (every request passes, its key already seen) and at /refused/hello with one request an hour
// (every request but the first is refused with 429, httprate's http.Error).
package main

// LimitByIP is deprecated in httprate v0.16 only for keying off r.RemoteAddr behind proxies; the
// rate-limit figures measure it as chi's users call it, the server facing its clients directly.
//lint:file-ignore SA1019 the rate-limit figures measure LimitByIP itself, its key the client's address

import (
	"context"
	"io"
	"log"
	"net"
	"net/http"
	"time"

	"github.com/dwellhttp/dwell/bench/internal/peer"
	"github.com/go-chi/httprate"
)

// unreached is the limit, per second, of /limited: a benchmark over loopback makes a few
// hundred thousand requests a second, so every request passes and is counted.
const unreached = 100_000_000

func main() {
	f := peer.ParseFlags()
	hello := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, peer.Hello)
	})
	mux := http.NewServeMux()
	mux.Handle("GET /hello", hello)
	mux.Handle("GET /limited/hello", httprate.LimitByIP(unreached, time.Second)(hello))
	mux.Handle("GET /refused/hello", httprate.LimitByIP(1, time.Hour)(hello))

	ln, err := net.Listen("tcp", f.Addr)
	if err != nil {
		log.Fatal(err)
	}
	srv := &http.Server{Handler: mux}
	go func() {
		if err := srv.Serve(ln); err != http.ErrServerClosed {
			log.Fatal(err)
		}
	}()
	peer.Ready(ln.Addr().String())
	peer.WaitForStop()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	srv.Shutdown(ctx)
}
