package middleware_test

import (
	"context"
	"log/slog"
	"net/netip"
	"time"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/middleware"
	"github.com/dwellhttp/dwell/router"
)

// Two writes a minute per client, on the write routes only, behind a proxy on the same
// machine: the third write from 203.0.113.7 is refused, in JSON as the server's own refusals
// are, and tells the client when to come back; another client is not affected. Every answer
// says how many writes are left.
func ExampleRateLimit() {
	r := router.New()
	r.Use(middleware.RealIP(middleware.RealIPOptions{Trusted: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}))
	writes := r.Group("/todos")
	writes.Use(middleware.RateLimit(middleware.RateLimitOptions{Rate: 2, Period: time.Minute}))
	writes.POST("", func(c *core.Ctx) { c.SetStatus(201) })
	s := core.NewServer(r.Handler(), core.Options{
		Addr:         "127.0.0.1:0",
		WriteRefusal: middleware.JSONRefusal,
		Logger:       slog.New(slog.DiscardHandler),
	})
	if err := s.Listen(); err != nil {
		panic(err)
	}
	go s.ListenAndServe()
	defer s.Shutdown(context.Background())
	url := "http://" + s.Addr().String() + "/todos"

	for _, client := range []string{"203.0.113.7", "203.0.113.7", "203.0.113.7", "203.0.113.8"} {
		do("POST", url, []string{"X-Forwarded-For: " + client}, "RateLimit", "Retry-After")
	}
	// Output:
	// 201 Created | RateLimit="default";r=1;t=30 | Retry-After=
	// 201 Created | RateLimit="default";r=0;t=30 | Retry-After=
	// 429 Too Many Requests | RateLimit="default";r=0;t=30 | Retry-After=30 | "{\"error\":\"rate limit exceeded\"}\n"
	// 201 Created | RateLimit="default";r=1;t=30 | Retry-After=
}
