// Command todo is the application template: a JSON API for a to-do list, with the middleware a
// service runs on every route, authentication and a rate limit on writes, a long poll, an event
// stream and a WebSocket of changes, file attachments streamed to disk, a page of its own, and
// the profiler — each the way dwell means it to be done, ready to copy.
//
// Routes:
//
//	GET    /                          the page: the list, following the changes live (over
//	                                  the WebSocket, or long polls where none gets through),
//	                                  to add, complete and delete todos (signing in with the
//	                                  token when the server asks for it); no-cache, an ETag
//	GET    /static/NAME               the page's script and style, cached for a year (the page
//	                                  names them with a hash of their content); gzip for
//	                                  clients that accept it, an ETag, 304 to If-None-Match
//	GET    /todos                     200 [{"id", "title", "done"}, ...]
//	POST   /todos                     {"title", "done"} → 201 the todo, Location: /todos/ID
//	GET    /todos/:id                 200 the todo
//	PUT    /todos/:id                 {"title", "done"} → 200 the todo
//	DELETE /todos/:id                 204
//	GET    /todos/changes?after=N&timeout=MS
//	                                  the changes after sequence N, at once or as soon as one
//	                                  comes (30 s by default): {"changes": [{"seq", "op",
//	                                  "todo"}], "next": N}, with "missed": true when some
//	                                  are no longer kept (read GET /todos again); an old N is
//	                                  answered a page at a time: poll again with next. An N
//	                                  ahead of the log counts as its last: with timeout=0,
//	                                  a way to learn the cursor before reading the list
//	GET    /todos/events              the changes as Server-Sent Events (id: seq, event: op,
//	                                  data: the todo), from after Last-Event-ID when given
//	GET    /todos/ws?after=N          a WebSocket that follows the changes: text messages
//	                                  each a poll's answer, first those after N (from now
//	                                  without N), then one with no changes (caught up), then
//	                                  each change as it is made, and one with none every 25 s
//	                                  with nothing new
//	POST   /todos/:id/attachment      the body, streamed to disk → 201 {"size", "sha256"}
//	GET    /todos/:id/attachment      the file, with Range and an ETag
//	POST   /session                   {"token"} → 204 and a session cookie, with which a browser
//	                                  writes without the bearer token (401 for a wrong token)
//	GET    /session                   200 {"signed_in"}
//	DELETE /session                   204, the session cookie cleared
//	GET    /metrics                   the metrics, in Prometheus's text format: the server's
//	                                  statistics (dwell_server_*), the requests'
//	                                  (http_server_request_duration_seconds and the body
//	                                  sizes, by http_request_method, http_route,
//	                                  http_response_status_code, url_scheme), Go's (with
//	                                  go_gc_heap_live_bytes, the heap the last collection
//	                                  found live) and the process's
//	GET    /debug/dwell               the live status page (package statuspage): connections by
//	                                  state, requests per second, refusals, stalls, memory,
//	                                  updating over Server-Sent Events; JSON for
//	                                  Accept: application/json (with the token, when there is
//	                                  one)
//	GET    /debug/pprof/              net/http/pprof, through the router's net/http bridge
//	                                  (with the token, when there is one)
//
// Errors are JSON, {"error": "..."}, the server's own answers included (a 400 for a malformed
// request, a 431 for a header section over the bound, a 408 for a request that never came
// whole, a 413 for an attachment over 1 GiB, a 503 at shutdown): 400 for bad JSON (the field
// and byte offset named) or unknown fields, 401 with WWW-Authenticate: Bearer for a write
// without the token or a session, 403 for a write a browser sends from a page of another origin
// (middleware.CrossOrigin: cross-site request forgery), 404, 405, 413 for a body over
// -max-body, 415 for a body that is not JSON, 429 for a write over -rate (with Retry-After;
// with -rate, every response of the writes carries the RateLimit and RateLimit-Policy
// fields). Every response carries an X-Request-Id, and stderr gets one JSON line per response:
// method, path, route (the pattern, or the router's label for its own answers: "(not
// found)"), status, bytes, duration (nanoseconds), request_id.
//
// The todos are kept in a SQLite database (a file, todo.db in -dir unless -db names another),
// so that they survive a restart with the same -dir; every query runs off the loop through
// wait.Call. So is the change log that polls, streams and sockets follow (its last 100,000
// changes), each change written in the transaction of its write: a process started again on
// the same database numbers its changes on from the last one stored, and a client that comes
// back with a cursor from before the restart gets exactly the changes it missed.
//
// Flags: -addr, -loops; -dir, where attachments and the database go (a temporary directory by
// default, removed on exit); -db FILE, the database; -token, the bearer token that writes and
// the profiler need (none: they are open); -origin, the origin allowed to call the API from a
// browser (none by default); -max-body, the largest JSON body (1 MiB); -cert FILE -key FILE, a
// certificate and its key (PEM), serve HTTPS instead of HTTP; -redirect ADDR, with -cert, also
// listen on ADDR for plain HTTP, every request of which is redirected to the same URL over
// HTTPS (301 for GET and HEAD, 308 for the others, which keep their method and body) — one
// server with two listeners, stopped together, which prints "redirecting http://ADDR" after
// its "listening https://ADDR"; -rate N, the writes a client
// address may make per second (0, the default: no limit) — N at once, then one every 1/N s —
// counted before the token is checked, with the sign-ins (POST /session) and the requests
// for /debug, so that the token cannot be guessed faster. The limit keeps its addresses in a
// table of 65,536 entries (1.1 MB) made at start, whatever the number of clients.
//
// On SIGINT or SIGTERM the server stops: long polls and event streams are answered at once,
// sockets closed with 1001, and other requests get a short grace period.
package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"log"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/middleware"
	"github.com/dwellhttp/dwell/router"
)

// grace bounds how long a shutdown waits for requests still running (uploads, say): parked
// polls and streams end at once, and the process must be gone within two seconds.
const grace = 1500 * time.Millisecond

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "address to listen on")
	loops := flag.Int("loops", 0, "number of event loops (0: one per CPU)")
	dir := flag.String("dir", "", "directory for attachments and the database (default: a temporary one, removed on exit)")
	db := flag.String("db", "", "SQLite database file (default: todo.db in -dir)")
	token := flag.String("token", "", "bearer token that writes and the profiler need (empty: they are open)")
	origin := flag.String("origin", "", "origin allowed to call the API from a browser, such as https://app.example")
	maxBody := flag.Int64("max-body", 1<<20, "largest JSON request body, in bytes")
	certFile := flag.String("cert", "", "certificate file (PEM): serve HTTPS, with -key")
	keyFile := flag.String("key", "", "private key file (PEM) of -cert")
	rate := flag.Int("rate", 0, "writes a client address may make per second, in a burst or spread out (0: no limit)")
	redirect := flag.String("redirect", "", "with -cert: an address to listen on for plain HTTP, redirecting every request to HTTPS")
	flag.Parse()
	if *redirect != "" && *certFile == "" {
		log.Fatal("todo: -redirect needs -cert and -key: it redirects to the HTTPS address")
	}

	var tlsConfig *tls.Config
	if *certFile != "" || *keyFile != "" {
		cert, err := tls.LoadX509KeyPair(*certFile, *keyFile)
		if err != nil {
			log.Fatal(err)
		}
		tlsConfig = &tls.Config{Certificates: []tls.Certificate{cert}}
	}

	tmp := ""
	if *dir == "" {
		var err error
		if tmp, err = os.MkdirTemp("", "todo-"); err != nil {
			log.Fatal(err)
		}
		*dir = tmp
	}
	err := run(config{addr: *addr, loops: *loops, dir: *dir, db: *db, token: *token, origin: *origin, maxBody: *maxBody, tls: tlsConfig, rate: *rate, redirect: *redirect})
	if tmp != "" {
		os.RemoveAll(tmp) // before exiting, which runs no deferred call
	}
	if err != nil {
		log.Fatal(err)
	}
}

// config is the command line.
type config struct {
	addr     string
	loops    int
	dir      string
	db       string // the SQLite file; "" for todo.db in dir
	token    string
	origin   string
	maxBody  int64
	tls      *tls.Config // nil: plain HTTP
	rate     int         // writes per client address per second; 0 for no limit
	redirect string      // with tls, an address whose plain HTTP requests are redirected to HTTPS

	now func() time.Time // the rate limit's clock, for tests; nil for time.Now
}

// serverOptions are the server's options that are the application's, not the command line's:
// what the tests' servers take too.
func serverOptions() core.Options {
	return core.Options{
		MaxBodyBytes: maxAttachment,
		WriteRefusal: middleware.JSONRefusal, // the server's own answers in JSON too: a 413, a 429
	}
}

// run serves until a signal, then shuts down.
func run(cfg config) error {
	logger := slog.New(slog.NewJSONHandler(os.Stderr, nil))
	a, err := newApp(cfg, logger)
	if err != nil {
		return err
	}
	defer a.close()
	o := serverOptions()
	o.Addr, o.Loops, o.Logger, o.TLSConfig = cfg.addr, cfg.loops, logger, cfg.tls
	srv := core.NewServer(a.handler(), o)
	if cfg.redirect != "" {
		// The redirect learns the HTTPS port from the server once it listens: -addr may ask
		// for any free port (":0").
		srv.AddListener(core.Listener{Addr: cfg.redirect, Handler: router.RedirectToHTTPSAddr(srv.Addr)})
	}
	a.serve(srv)
	if err := srv.Listen(); err != nil {
		return err
	}
	// Signals are caught before the server says it is ready, so that one sent right after
	// the announcement shuts it down gracefully rather than killing it.
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGINT, syscall.SIGTERM)
	scheme := "http"
	if cfg.tls != nil {
		scheme = "https"
	}
	fmt.Printf("listening %s://%s\n", scheme, srv.Addr())
	if cfg.redirect != "" {
		fmt.Printf("redirecting http://%s\n", srv.Addrs()[1])
	}

	go func() {
		<-stop
		ctx, cancel := context.WithTimeout(context.Background(), grace)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			logger.Warn("shutdown", "error", err.Error())
		}
	}()
	if err := srv.ListenAndServe(); !errors.Is(err, core.ErrServerClosed) {
		return err
	}
	return nil
}
