// Command nethttp brings net/http handlers to dwell: every route here is an ordinary
// http.Handler, served through the bridge (nethttp.Handler, router.HandleHTTP and Mount) —
// the standard library's profiler and variables, a file server, and handlers that stream,
// wait and watch their request's context as they would under net/http.
//
// Routes:
//
//	/debug/pprof/...   net/http/pprof: the index, profile, heap, goroutine, trace, ...
//	/debug/vars        expvar, as JSON
//	GET /std/hello     Hello World
//	POST /std/echo     the request body, streamed back as it arrives
//	GET /std/sse       five Server-Sent Events, 100 ms apart, each flushed
//	GET /std/wait      sends its head, then waits until the client leaves (or the server
//	                   stops), and counts it
//	GET /std/cancelled how many waits have been cancelled so far
//	/std/files/...     the files of -dir, with http.FileServer (ranges, conditional requests)
//
// Each net/http handler runs on a goroutine of the bridge's pool while the request's dwell
// handler parks, so a handler may block as it does under net/http; request and response bodies
// stream through the loop with its backpressure.
//
// Flags: -addr, -loops, and -dir, the directory served at /std/files/ (the current one).
package main

import (
	"context"
	"errors"
	"expvar"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log"
	"net/http"
	"net/http/pprof"
	"os"
	"os/signal"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/router"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "address to listen on")
	loops := flag.Int("loops", 0, "number of event loops (0: one per CPU)")
	dir := flag.String("dir", ".", "directory served at /std/files/")
	flag.Parse()

	srv := core.NewServer(routes(*dir), core.Options{Addr: *addr, Loops: *loops})
	if err := srv.Listen(); err != nil {
		log.Fatal(err)
	}
	// Signals are caught before the server says it is ready, so that one sent right after
	// the announcement shuts it down gracefully rather than killing it.
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGINT, syscall.SIGTERM)
	fmt.Printf("listening http://%s\n", srv.Addr())

	go func() {
		<-stop
		// Waits in /std/wait last until their clients leave; past the grace period their
		// contexts are cancelled and they end.
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			log.Printf("shutdown: %v", err)
		}
	}()
	if err := srv.ListenAndServe(); !errors.Is(err, core.ErrServerClosed) {
		log.Fatal(err)
	}
}

// routes serves the example's endpoints, all of them net/http handlers.
func routes(dir string) core.Handler {
	debug := http.NewServeMux()
	debug.HandleFunc("/debug/pprof/", pprof.Index)
	debug.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	debug.HandleFunc("/debug/pprof/profile", pprof.Profile)
	debug.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	debug.HandleFunc("/debug/pprof/trace", pprof.Trace)

	var w waits
	r := router.New()
	r.Mount("/debug/pprof", debug)
	r.HandleHTTP("GET", "/debug/vars", expvar.Handler())
	r.HandleHTTP("GET", "/std/hello", http.HandlerFunc(hello))
	r.HandleHTTP("POST", "/std/echo", http.HandlerFunc(echo))
	r.HandleHTTP("GET", "/std/sse", http.HandlerFunc(events))
	r.HandleHTTP("GET", "/std/wait", http.HandlerFunc(w.wait))
	r.HandleHTTP("GET", "/std/cancelled", http.HandlerFunc(w.cancelled))
	r.Mount("/std/files", http.StripPrefix("/std/files", http.FileServerFS(filesIn(dir))))
	return r.Handler()
}

// filesIn returns the files under dir as os.Root sees them: a symbolic link cannot lead out of
// dir, as it can through http.Dir. (FileServerFS still lists directories and serves names that
// begin with a dot, as net/http's file server does: point -dir at what may be published.)
func filesIn(dir string) fs.FS {
	root, err := os.OpenRoot(dir)
	if err != nil {
		log.Fatal(err)
	}
	return root.FS()
}

func hello(w http.ResponseWriter, r *http.Request) {
	io.WriteString(w, "Hello World")
}

// echo streams the body back: each piece goes out as it arrives, with the client's pace on
// both sides, so a body of any size costs a few buffers.
func echo(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Content-Type") != "" {
		w.Header().Set("Content-Type", r.Header.Get("Content-Type"))
	}
	io.Copy(w, r.Body)
}

// events sends five Server-Sent Events 100 ms apart, each flushed as it is written, and stops
// early when the client leaves.
func events(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for i := 1; i <= 5; i++ {
		if i > 1 {
			select {
			case <-tick.C:
			case <-r.Context().Done():
				return
			}
		}
		fmt.Fprintf(w, "data: %d\n\n", i)
		if err := http.NewResponseController(w).Flush(); err != nil {
			return
		}
	}
}

// waits counts the requests to /std/wait whose context was cancelled.
type waits struct{ n atomic.Int64 }

// wait sends its response head at once, so that the client knows it waits, then blocks until
// the request's context is cancelled — its client left, or the server's shutdown ended — as a
// net/http long poll does, and counts it.
func (ws *waits) wait(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	http.NewResponseController(w).Flush()
	<-r.Context().Done()
	ws.n.Add(1)
}

func (ws *waits) cancelled(w http.ResponseWriter, r *http.Request) {
	io.WriteString(w, strconv.FormatInt(ws.n.Load(), 10))
}
