package main

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/pprof"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/dwellhttp/dwell/body"
	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/middleware"
	"github.com/dwellhttp/dwell/promdwell"
	"github.com/dwellhttp/dwell/router"
	"github.com/dwellhttp/dwell/session"
	"github.com/dwellhttp/dwell/statuspage"
	"github.com/dwellhttp/dwell/websocket"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// An app is the service: its store, its attachments, its metrics and its settings.
type app struct {
	cfg      config
	logger   *slog.Logger
	todos    *store
	files    *attachments
	metrics  *prometheus.Registry
	sessions *session.Store[signIn]
	status   atomic.Pointer[core.Handler] // the status page, once the server exists (serve)

	feed          *websocket.Feed[change] // what the sockets follow (socket.go)
	socketOptions *websocket.Options
	// answerPoll is answerChanges, bound once: a poll waiting on the topic holds this value,
	// not a closure of its own.
	answerPoll func(*core.Ctx, []change, uint64, error)
}

// newApp opens the app's files and database (cfg.db, or todo.db in cfg.dir). The caller closes
// it when the server has stopped.
func newApp(cfg config, logger *slog.Logger) (*app, error) {
	files, err := openAttachments(cfg.dir)
	if err != nil {
		return nil, err
	}
	if cfg.db == "" {
		cfg.db = filepath.Join(cfg.dir, "todo.db")
	}
	sessions, err := openSessions(cfg.dir, cfg.token, cfg.tls == nil)
	if err != nil {
		return nil, err
	}
	todos, err := openStore(context.Background(), cfg.db)
	if err != nil {
		return nil, err
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(
		// Go's usual figures, and go_gc_heap_live_bytes: the heap the last collection found
		// live, which garbage made since does not blur — the figure that tells a leak.
		collectors.NewGoCollector(collectors.WithGoCollectorRuntimeMetrics(
			collectors.GoRuntimeMetricsRule{Matcher: regexp.MustCompile(`^/gc/heap/live:bytes$`)})),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	a := &app{cfg: cfg, logger: logger, todos: todos, files: files, metrics: reg, sessions: sessions,
		feed: newFeed(todos.changes), socketOptions: socketOptions(cfg.origin)}
	a.answerPoll = a.answerChanges
	return a, nil
}

// close closes the database.
func (a *app) close() error { return a.todos.close() }

// serve registers the server's statistics with the app's metrics and makes its status page,
// once the server exists: the server is made with the app's handler, so the handler reaches
// them through the app.
func (a *app) serve(srv *core.Server) {
	a.metrics.MustRegister(promdwell.NewCollector(srv))
	h := statuspage.Handler(srv, statuspage.Options{})
	a.status.Store(&h)
}

// statusPage serves the live status page at /debug/dwell.
func (a *app) statusPage(c *core.Ctx) {
	h := a.status.Load()
	if h == nil {
		fail(c, 503, "the server is starting")
		return
	}
	(*h)(c)
}

// handler routes the API. The middleware runs on every route and on the router's own answers
// (404, 405, OPTIONS), outermost first: the request id first, so that every other middleware
// and the access log see it.
func (a *app) handler() core.Handler {
	r := router.New()
	r.NotFound = func(c *core.Ctx) { fail(c, 404, "no such resource") }
	r.MethodNotAllowed = func(c *core.Ctx) { fail(c, 405, "method not allowed; see the Allow field") }
	var origins []string
	if a.cfg.origin != "" {
		origins = []string{a.cfg.origin}
	}
	r.Use(
		middleware.AssignRequestID,
		promdwell.NewMetrics(a.metrics).Middleware,
		middleware.AccessLog(a.logger),
		middleware.Recover(middleware.JSONError),
		middleware.CORS(middleware.CORSOptions{
			Origins:       origins,
			Methods:       []string{"GET", "HEAD", "POST", "PUT", "DELETE"},
			Headers:       []string{"Content-Type", "Authorization", "Last-Event-ID", middleware.RequestIDHeader},
			ExposeHeaders: []string{"Location", "ETag", middleware.RequestIDHeader},
		}),
		// Writes from a browser must come from a page of this origin (or -origin's): a
		// cross-site form or script cannot use the visitor's session.
		middleware.CrossOrigin(middleware.CrossOriginOptions{TrustedOrigins: origins, Error: middleware.JSONError}),
		middleware.Compress(middleware.CompressOptions{}),
	)
	// The rate limit comes before authentication, so that guessing the token is limited too,
	// and it counts sign-ins with the writes: a sign-in takes the token as well.
	limit := middleware.RateLimit(middleware.RateLimitOptions{Rate: a.cfg.rate, Name: "writes", Now: a.cfg.now})
	auth := a.writes()
	w := func(h core.Handler) core.Handler { return limit(auth(h)) }
	site := newSite()
	for _, method := range []string{"GET", "HEAD"} {
		r.Handle(method, "/", site.index)
		r.Handle(method, "/static/*filepath", site.asset)
	}
	r.POST("/session", limit(a.createSession))
	r.GET("/session", a.showSession)
	r.DELETE("/session", a.deleteSession)
	todos := r.Group("/todos")
	todos.GET("", a.list)
	todos.POST("", w(a.create))
	todos.GET("/changes", a.changes)
	todos.GET("/events", a.events)
	todos.GET("/ws", a.socket)
	todos.GET("/:id", a.show)
	todos.PUT("/:id", w(a.update))
	todos.DELETE("/:id", w(a.remove))
	todos.GET("/:id/attachment", a.download)
	todos.POST("/:id/attachment", w(middleware.BodyLimit(maxAttachment)(a.upload)))
	// The metrics are open, as scrapers expect; the profiler tells much more about the
	// process: it takes the token too, when there is one.
	r.GET("/metrics", promdwell.Handler(a.metrics))
	debug := r.Group("/debug")
	debug.Use(w)
	debug.Mount("/pprof", profiler())
	debug.GET("/dwell", a.statusPage)
	return r.Handler()
}

// profiler is net/http/pprof's handlers on a mux of their own, rather than on
// http.DefaultServeMux, where any imported package may register more.
func profiler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	return mux
}

// fail answers an error as JSON, {"error": msg}.
func fail(c *core.Ctx, status int, msg string) { middleware.JSONError(c, status, msg) }

// input is the body of POST /todos and PUT /todos/:id.
type input struct {
	Title *string `json:"title"`
	Done  bool    `json:"done"`
}

// readInput reads and checks a todo from the body, answering the error itself when there is
// one: false means the request is answered.
func (a *app) readInput(c *core.Ctx) (string, bool, bool) {
	var in input
	err := body.ReadJSON(c, &in, body.JSONOptions{Limit: a.cfg.maxBody, DisallowUnknownFields: true})
	var be *body.Error
	switch {
	case errors.As(err, &be):
		fail(c, be.Status, be.Error())
		return "", false, false
	case err != nil:
		return "", false, false // the body broke on the wire: the server answers
	case in.Title == nil || strings.TrimSpace(*in.Title) == "":
		fail(c, 400, `JSON field "title" must be a non-empty string`)
		return "", false, false
	case len(*in.Title) > maxTitle:
		// Every change is kept in the log and the topic's memory (changelog.go): a title is
		// bounded, or the body limit would be what a change may cost.
		fail(c, 400, `JSON field "title" is over `+strconv.Itoa(maxTitle)+" bytes")
		return "", false, false
	}
	return *in.Title, in.Done, true
}

// maxTitle bounds a todo's title, in bytes.
const maxTitle = 1000

// todoID parses the :id parameter; false means the request is answered (404).
func todoID(c *core.Ctx) (int64, bool) {
	s := c.Param("id")
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil || id <= 0 {
		fail(c, 404, "no todo "+strconv.Quote(s))
		return 0, false
	}
	return id, true
}

// notFound answers 404 for a todo that does not exist.
func notFound(c *core.Ctx, id int64) { fail(c, 404, "no todo "+strconv.FormatInt(id, 10)) }
