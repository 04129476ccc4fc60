// Command dwell-mw is dwell's benchmark server with the middleware most services put on every
// route: a request id, an access log (one JSON line per response through
// middleware.LogHandler, buffered, to the -accesslog file: /dev/null unless set, see
// peer.Flags) and panic recovery. It serves GET /hello only: it is measured on the hello figure
// and the allocations row, beside the plain dwell server, to show what the stack costs per
// request.
package main

import (
	"context"
	"log"
	"log/slog"
	"time"

	"github.com/dwellhttp/dwell/bench/internal/peer"
	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/middleware"
	"github.com/dwellhttp/dwell/router"
)

func main() {
	f := peer.ParseFlags()
	logs := middleware.NewLogHandler(f.OpenAccessLog(), nil)
	defer logs.Close()
	srv := core.NewServer(routes(slog.New(logs)), core.Options{Addr: f.Addr})
	if err := srv.Listen(); err != nil {
		log.Fatal(err)
	}
	go func() {
		if err := srv.ListenAndServe(); err != core.ErrServerClosed {
			log.Fatal(err)
		}
	}()
	peer.Ready(srv.Addr().String())
	peer.WaitForStop()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	srv.Shutdown(ctx)
}

// routes is /hello behind the request id, the access log and recovery, as a service would
// stack them.
func routes(logger *slog.Logger) core.Handler {
	r := router.New()
	r.Use(middleware.AssignRequestID, middleware.AccessLog(logger), middleware.Recover(middleware.JSONError))
	r.GET("/hello", func(c *core.Ctx) {
		c.SetHeader("Content-Type", "text/plain")
		c.WriteString(peer.Hello)
	})
	return r.Handler()
}
