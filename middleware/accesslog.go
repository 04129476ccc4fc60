package middleware

import (
	"context"
	"log/slog"
	"sync"

	"github.com/dwellhttp/dwell/core"
)

// AccessLog logs one line per response to logger (nil means slog.Default()), at level Info
// with the message "request", once the response is complete — whoever finished it: the
// handler, its continuation, or the server itself (a 413 for a body over the limit, a 503 at
// shutdown or past a deadline, a 500 after a panic) — so that the line tells what really went
// out. Its attributes:
//
//   - method: the request method;
//   - path: the request path, decoded, without the query (which may carry secrets);
//   - route: the route's pattern ("/todos/:id"), or the router's label for its own answers
//     ("(not found)", see core.Seam.RouteLabel), when a router served the request;
//   - status: the response status;
//   - bytes: the body bytes sent, after compression (0 for HEAD);
//   - duration: from the request's head being read to the response being queued whole for
//     the client, waits and continuations included (a time.Duration: nanoseconds in JSON,
//     "1.5ms" in text);
//   - request_id: the id AssignRequestID gave the request, when it runs;
//   - error: why the response did not end normally (the client left, a timeout, a body that
//     failed, a panic), only when it did not;
//   - the fields asked for (LogField), when the request has them;
//   - the attributes the application added for the request (AddLogAttrs).
//
// The format is the logger's handler's: slog.NewJSONHandler gives JSON lines,
// slog.NewTextHandler key=value lines. A logger whose handler is a LogHandler gets the JSON
// lines slog.NewJSONHandler would give, buffered, which the access log writes without making
// slog records: at many requests a second, the one to use. The line is written on the
// request's loop, so the handler's output should not block for long: a file or stderr, not a
// network service.
func AccessLog(logger *slog.Logger, fields ...LogField) func(core.Handler) core.Handler {
	if logger == nil {
		logger = slog.Default()
	}
	var want LogField
	for _, f := range fields {
		want |= f
	}
	direct, _ := logger.Handler().(*LogHandler)
	if direct != nil && !direct.direct {
		direct = nil
	}
	return func(next core.Handler) core.Handler {
		return func(c *core.Ctx) {
			if !logger.Enabled(context.Background(), slog.LevelInfo) {
				next(c)
				return
			}
			e := logEntries.Get().(*logEntry)
			e.logger, e.direct, e.method = logger, direct, c.Method()
			// The path is copied into the entry's own array, which the pool keeps: the line is
			// written after the handler, whose borrowed bytes are gone by then.
			e.pathBytes = append(e.pathBytes[:0], c.Bytes().Path()...)
			e.fields = want
			e.capture(c)
			c.OnDone(e.done)
			// What middleware inside this one (AssignRequestID, a router this middleware
			// wraps, a tracing middleware) and the handler set is read once they have
			// returned, or panicked. The hook has not run yet: it runs once the handler, of
			// which this middleware is a part, has returned.
			defer e.captureLate(c)
			next(c)
		}
	}
}

// A logEntry is what a line needs from the request, captured before the request's values end.
// Entries are pooled, each with its hook made once, so that a line costs no closure.
type logEntry struct {
	logger     *slog.Logger
	direct     *LogHandler // the logger's handler, when the entry writes its line itself
	method, id string
	pathBytes  []byte // the request's path, decoded
	route      string
	fields     LogField
	extra      logExtra
	line       []byte          // the line, when the entry writes it itself
	done       func(core.Done) // e.write
}

var logEntries sync.Pool

func init() {
	logEntries.New = func() any {
		e := new(logEntry)
		e.done = e.write
		return e
	}
}

// write logs the line and puts the entry back in the pool.
func (e *logEntry) write(d core.Done) {
	if e.direct != nil && len(e.extra.added) == 0 {
		if !e.direct.out.appendEntry(e, d) {
			e.line = e.appendLine(e.line[:0], &e.direct.stamps, d)
			e.direct.out.Write(e.line)
		}
	} else {
		e.log(e.logger.Handler(), d)
	}
	// The entry keeps its arrays for the next request, unless a long path or line made them
	// large.
	path, line := e.pathBytes[:0], e.line[:0]
	if cap(path) > maxKeptPath {
		path = nil
	}
	if cap(line) > 2*maxKeptPath {
		line = nil
	}
	*e = logEntry{done: e.done, pathBytes: path, line: line}
	logEntries.Put(e)
}

// maxKeptPath is the longest path whose array a pooled entry keeps.
const maxKeptPath = 1 << 10

// log logs the line through slog's handler h, as a record of d.Time.
func (e *logEntry) log(h slog.Handler, d core.Done) {
	var attrs [16]slog.Attr
	a := attrs[:0]
	a = append(a,
		slog.String("method", e.method),
		slog.String("path", string(e.pathBytes)),
	)
	if e.route != "" {
		a = append(a, slog.String("route", e.route))
	}
	a = append(a,
		slog.Int("status", d.Status),
		slog.Int64("bytes", d.Bytes),
		slog.Duration("duration", d.Duration),
	)
	if e.id != "" {
		a = append(a, slog.String("request_id", e.id))
	}
	if d.Err != nil {
		a = append(a, slog.String("error", d.Err.Error()))
	}
	a = e.extra.attrs(a, e.fields)
	// The record is made here rather than by Logger.LogAttrs, which looks up its caller's
	// program counter for every record; an access line has no use for it.
	r := slog.NewRecord(d.Time, slog.LevelInfo, "request", 0)
	r.AddAttrs(a...)
	h.Handle(context.Background(), r)
}
