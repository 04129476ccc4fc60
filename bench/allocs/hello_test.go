package allocs

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/middleware"
	"github.com/dwellhttp/dwell/promdwell"
	"github.com/dwellhttp/dwell/router"
	"github.com/lesismal/nbio/nbhttp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/valyala/fasthttp"
)

const hello = "Hello World"

var request = []byte("GET /hello HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: bench\r\n\r\n")

// BenchmarkHello sends keep-alive GET /hello requests to each server in turn; allocs/op is the
// whole process's allocations per request, the client's being none.
func BenchmarkHello(b *testing.B) {
	for _, s := range []struct {
		name  string
		start func(b *testing.B) string
	}{
		{"dwell", startDwell},
		{"dwell-uring", func(b *testing.B) string { return onRing(b, startHello) }},
		{"dwell-mw", startDwellMW},
		{"dwell-metrics", startDwellMetrics},
		{"nethttp", startNetHTTP},
		{"fasthttp", startFastHTTP},
		{"nbio", startNbio},
	} {
		b.Run(s.name, func(b *testing.B) {
			addr := s.start(b)
			c, err := net.Dial("tcp", addr)
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			resp := firstResponse(b, c)
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

// firstResponse makes one exchange and returns a buffer of the response's size; every hello
// response of a server has the same size (the Date header keeps its length).
func firstResponse(b *testing.B, c net.Conn) []byte {
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

func listen(b *testing.B) net.Listener {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	return ln
}

func startDwell(b *testing.B) string { return startRouter(b) }

// startDwellMW is servers/dwell-mw: /hello behind a request id, an access log and recovery. The
// log goes through a LogHandler to io.Discard, which allocates no more than the file the server
// logs to.
func startDwellMW(b *testing.B) string {
	logger := slog.New(middleware.NewLogHandler(io.Discard, nil))
	return startRouter(b, middleware.AssignRequestID, middleware.AccessLog(logger), middleware.Recover(middleware.JSONError))
}

// startDwellMetrics is servers/dwell-metrics: dwell-mw's stack with promdwell's metrics.
func startDwellMetrics(b *testing.B) string {
	logger := slog.New(middleware.NewLogHandler(io.Discard, nil))
	return startRouter(b, middleware.AssignRequestID, promdwell.NewMetrics(prometheus.NewRegistry()).Middleware,
		middleware.AccessLog(logger), middleware.Recover(middleware.JSONError))
}

// startRouter serves the hello route of servers/dwell behind mw, and returns its address.
func startRouter(b *testing.B, mw ...func(core.Handler) core.Handler) string {
	return startRouterWith(b, core.Options{}, mw...)
}

// startHello is servers/dwell's hello route alone, on a server with options o.
func startHello(b *testing.B, o core.Options) string { return startRouterWith(b, o) }

// startRouterWith is startRouter on a server with options o.
func startRouterWith(b *testing.B, o core.Options, mw ...func(core.Handler) core.Handler) string {
	r := router.New()
	r.Use(mw...)
	r.GET("/hello", func(c *core.Ctx) {
		c.SetHeader("Content-Type", "text/plain")
		c.WriteString(hello)
	})
	s := core.NewServer(r.Handler(), o)
	ln := listen(b)
	go s.Serve(ln)
	b.Cleanup(func() { s.Shutdown(context.Background()) })
	return ln.Addr().String()
}

func startNetHTTP(b *testing.B) string {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /hello", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, hello)
	})
	s := &http.Server{Handler: mux}
	ln := listen(b)
	go s.Serve(ln)
	b.Cleanup(func() { s.Close() })
	return ln.Addr().String()
}

func startFastHTTP(b *testing.B) string {
	s := &fasthttp.Server{Handler: func(ctx *fasthttp.RequestCtx) {
		if string(ctx.Path()) == "/hello" {
			ctx.SetContentType("text/plain")
			ctx.WriteString(hello)
			return
		}
		ctx.SetStatusCode(404)
	}}
	ln := listen(b)
	go s.Serve(ln)
	b.Cleanup(func() { s.Shutdown() })
	return ln.Addr().String()
}

func startNbio(b *testing.B) string {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /hello", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.Header().Set("Content-Length", "11")
		io.WriteString(w, hello)
	})
	ln := listen(b)
	addr := ln.Addr().String()
	ln.Close() // nbhttp listens itself
	e := nbhttp.NewEngine(nbhttp.Config{Network: "tcp", Addrs: []string{addr}, Handler: mux})
	if err := e.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { e.Stop() })
	return addr
}
