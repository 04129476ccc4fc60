// Command dwell-ratelimit is dwell's benchmark server for the rate-limit figures: GET /hello
// as servers/dwell answers it, and the same answer behind middleware.RateLimit keyed on the
// client's address, at /limited/hello with a limit no benchmark reaches (every request passes,
// its key already seen) and at /refused/hello with one request an hour (every request but the
// first is refused with 429). No WriteRefusal is set: the refusal is the plain text of the
// server's own answers, as net/http's http.Error is for httprate.
package main

import (
	"context"
	"log"
	"time"

	"github.com/dwellhttp/dwell/bench/internal/peer"
	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/middleware"
	"github.com/dwellhttp/dwell/router"
)

// unreached is the limit, per second, of /limited: a benchmark over loopback makes a few
// hundred thousand requests a second, so every request passes and is counted.
const unreached = 100_000_000

func main() {
	f := peer.ParseFlags()
	srv := core.NewServer(routes(), core.Options{Addr: f.Addr})
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

func routes() core.Handler {
	hello := func(c *core.Ctx) {
		c.SetHeader("Content-Type", "text/plain")
		c.WriteString(peer.Hello)
	}
	r := router.New()
	r.GET("/hello", hello)
	limited := r.Group("/limited")
	limited.Use(middleware.RateLimit(middleware.RateLimitOptions{Rate: unreached}))
	limited.GET("/hello", hello)
	refused := r.Group("/refused")
	refused.Use(middleware.RateLimit(middleware.RateLimitOptions{Rate: 1, Period: time.Hour}))
	refused.GET("/hello", hello)
	return r.Handler()
}
