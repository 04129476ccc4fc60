package allocs

// LimitByIP is deprecated in httprate v0.16 only for keying off r.RemoteAddr behind proxies; the
// rate-limit figures measure it as chi's users call it, the server facing its clients directly.
//lint:file-ignore SA1019 the rate-limit figures measure LimitByIP itself, its key the client's address

import (
	"context"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/middleware"
	"github.com/dwellhttp/dwell/router"
	"github.com/go-chi/httprate"
)

// BenchmarkRateLimit is the hello path behind a rate limiter keyed on the client's address, as
// servers/dwell-ratelimit and servers/nethttp-httprate serve it at /limited/hello: a limit no
// benchmark reaches, so every request passes and its key has been seen. allocs/op is the
// process's, the client allocating nothing.
func BenchmarkRateLimit(b *testing.B) {
	rateLimitBench(b, "GET /limited/hello HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: bench\r\n\r\n")
}

// BenchmarkRateLimitRefused is the same at /refused/hello, one request an hour: every request
// but the first is refused with 429.
func BenchmarkRateLimitRefused(b *testing.B) {
	rateLimitBench(b, "GET /refused/hello HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: bench\r\n\r\n")
}

// unreached is servers/*-ratelimit's limit per second on /limited.
const unreached = 100_000_000

func rateLimitBench(b *testing.B, req string) {
	for _, s := range []struct {
		name  string
		start func(b *testing.B) string
	}{
		{"dwell-ratelimit", func(b *testing.B) string { return startDwellRateLimit(b, core.Options{}) }},
		{"dwell-ratelimit-uring", func(b *testing.B) string { return onRing(b, startDwellRateLimit) }},
		{"nethttp-httprate", startHTTPRate},
	} {
		b.Run(s.name, func(b *testing.B) {
			addr := s.start(b)
			c, err := net.Dial("tcp", addr)
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			// The first request of /refused passes; the second's answer is the size of the
			// rest (the Retry-After and RateLimit values keep their digits for an hour).
			request := []byte(req)
			exchange(b, c, request)
			resp := exchange(b, c, request)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.Write(request); err != nil {
					b.Fatal(err)
				}
				if _, err := io.ReadFull(c, resp); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// exchange makes one exchange and returns a buffer of the response's size.
func exchange(b *testing.B, c net.Conn, request []byte) []byte {
	if _, err := c.Write(request); err != nil {
		b.Fatal(err)
	}
	buf := make([]byte, 4096)
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	n, err := c.Read(buf)
	if err != nil {
		b.Fatal(err)
	}
	c.SetReadDeadline(time.Time{})
	return buf[:n]
}

func startDwellRateLimit(b *testing.B, o core.Options) string {
	hello := func(c *core.Ctx) {
		c.SetHeader("Content-Type", "text/plain")
		c.WriteString(hello)
	}
	r := router.New()
	limited := r.Group("/limited")
	limited.Use(middleware.RateLimit(middleware.RateLimitOptions{Rate: unreached}))
	limited.GET("/hello", hello)
	refused := r.Group("/refused")
	refused.Use(middleware.RateLimit(middleware.RateLimitOptions{Rate: 1, Period: time.Hour}))
	refused.GET("/hello", hello)
	s := core.NewServer(r.Handler(), o)
	ln := listen(b)
	go s.Serve(ln)
	b.Cleanup(func() { s.Shutdown(context.Background()) })
	return ln.Addr().String()
}

func startHTTPRate(b *testing.B) string {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, hello)
	})
	mux := http.NewServeMux()
	mux.Handle("GET /limited/hello", httprate.LimitByIP(unreached, time.Second)(h))
	mux.Handle("GET /refused/hello", httprate.LimitByIP(1, time.Hour)(h))
	s := &http.Server{Handler: mux}
	ln := listen(b)
	go s.Serve(ln)
	b.Cleanup(func() { s.Close() })
	return ln.Addr().String()
}
