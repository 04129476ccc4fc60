// Command fasthttp is the fasthttp peer of the dwell benchmarks: one goroutine per connection
// like net/http, with pooled request contexts and no allocations on the hello path.
package main

import (
	"log"
	"net"
	"strconv"
	"sync"

	"github.com/dwellhttp/dwell/bench/internal/peer"
	"github.com/valyala/fasthttp"
	"github.com/valyala/fasthttp/fasthttpadaptor"
)

func main() {
	f := peer.ParseFlags()
	gate := peer.NewGate()
	bufs := sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}
	stdHello := fasthttpadaptor.NewFastHTTPHandler(peer.StdHello)

	handler := func(ctx *fasthttp.RequestCtx) {
		switch string(ctx.Path()) {
		case "/hello":
			ctx.SetContentType("text/plain")
			ctx.SetBodyString(peer.Hello)
		case "/std/hello":
			stdHello(ctx)
		case "/file":
			fasthttp.ServeFile(ctx, f.File)
		case peer.AssetPath:
			fasthttp.ServeFS(ctx, peer.Assets, peer.AssetPath[len("/fs/"):])
		case "/upload":
			if !ctx.IsPost() {
				ctx.SetStatusCode(fasthttp.StatusMethodNotAllowed)
				return
			}
			buf := bufs.Get().(*[]byte)
			defer bufs.Put(buf)
			n, err := peer.Count(ctx.RequestBodyStream(), *buf)
			if err != nil {
				ctx.Error(err.Error(), fasthttp.StatusBadRequest)
				return
			}
			ctx.SetContentType("text/plain")
			ctx.SetBodyString(strconv.FormatInt(n, 10))
		case "/poll":
			// fasthttp has no way to finish a response after the handler returns, so the handler
			// itself blocks, holding its goroutine and the connection's buffers.
			<-gate.Wait()
			ctx.SetContentType("text/plain")
			ctx.SetBodyString(peer.Released)
		case "/release":
			gate.Release()
			ctx.SetBodyString("ok")
		case "/download":
			n, err := peer.DownloadSize(string(ctx.QueryArgs().Peek("n")))
			if err != nil {
				ctx.Error(err.Error(), fasthttp.StatusBadRequest)
				return
			}
			ctx.SetContentType("application/octet-stream")
			ctx.SetBodyStream(peer.NewPayload(n), int(n))
		default:
			ctx.SetStatusCode(fasthttp.StatusNotFound)
		}
	}

	srv := &fasthttp.Server{
		Handler: handler,
		// With StreamRequestBody the server reads at most MaxRequestBodySize bytes of a body
		// before calling the handler and hands it the rest as a stream; a small limit is what
		// keeps an upload's memory bounded (the default would buffer the first 4 MiB).
		StreamRequestBody:  true,
		MaxRequestBodySize: 64 << 10,
	}
	ln, err := net.Listen("tcp", f.Addr)
	if err != nil {
		log.Fatal(err)
	}
	go func() {
		if err := srv.Serve(ln); err != nil {
			log.Fatal(err)
		}
	}()
	peer.Ready(ln.Addr().String())
	// Returning ends the process and with it every connection: fasthttp's Shutdown would wait for
	// parked polls to go idle, which they never do.
	peer.WaitForStop()
}
