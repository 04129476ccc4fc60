package middleware

import (
	"context"
	"log/slog"
	"sync"
	"time"

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
//   - status: the response status;
//   - bytes: the body bytes sent, after compression (0 for HEAD);
//   - duration: from the request's head being read to the response being queued whole for
//     the client, waits and continuations included (a time.Duration: nanoseconds in JSON,
//     "1.5ms" in text);
//   - request_id: the id AssignRequestID gave the request, when it runs;
//   - error: why the response did not end normally (the client left, a timeout, a body that
//     failed, a panic), only when it did not.
//
// The format is the logger's handler's: slog.NewJSONHandler gives JSON lines,
// slog.NewTextHandler key=value lines. The line is written on the request's loop, so the
// handler's output should not block for long: a file or stderr, not a network service.
func AccessLog(logger *slog.Logger) func(core.Handler) core.Handler {
	if logger == nil {
		logger = slog.Default()
	}
	return func(next core.Handler) core.Handler {
		return func(c *core.Ctx) {
			if !logger.Enabled(context.Background(), slog.LevelInfo) {
				next(c)
				return
			}
			e := logEntries.Get().(*logEntry)
			e.logger, e.method, e.path, e.id = logger, c.Method(), c.Path(), RequestID(c)
			c.OnDone(e.done)
			next(c)
			if e.id == "" {
				// AssignRequestID runs inside this middleware. The hook has not run yet: it
				// runs once the handler, of which this middleware is a part, has returned.
				e.id = RequestID(c)
			}
		}
	}
}

// A logEntry is what a line needs from the request, captured before the request's values end.
// Entries are pooled, each with its hook made once, so that a line costs no closure.
type logEntry struct {
	logger           *slog.Logger
	method, path, id string
	done             func(core.Done) // e.write
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
	attrs := [7]slog.Attr{
		slog.String("method", e.method),
		slog.String("path", e.path),
		slog.Int("status", d.Status),
		slog.Int64("bytes", d.Bytes),
		slog.Duration("duration", d.Duration),
	}
	n := 5
	if e.id != "" {
		attrs[n] = slog.String("request_id", e.id)
		n++
	}
	if d.Err != nil {
		attrs[n] = slog.String("error", d.Err.Error())
		n++
	}
	// The record is made here rather than by Logger.LogAttrs, which looks up its caller's
	// program counter for every record; an access line has no use for it.
	r := slog.NewRecord(time.Now(), slog.LevelInfo, "request", 0)
	r.AddAttrs(attrs[:n]...)
	e.logger.Handler().Handle(context.Background(), r)
	*e = logEntry{done: e.done}
	logEntries.Put(e)
}
