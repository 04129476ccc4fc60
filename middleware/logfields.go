package middleware

import (
	"log/slog"
	"net/netip"
	"strconv"
	"sync/atomic"

	"github.com/dwellhttp/dwell/core"
)

// A LogField is an attribute the access log adds to its lines when asked (AccessLog's
// fields), beyond those it always writes. Each costs a copy of what it logs, so the default is
// none of them.
type LogField uint8

const (
	// LogRemoteAddr adds remote_addr: the client's address — ClientIP's, which is the proxy's
	// client when RealIP runs before the access log, else the connection's peer.
	LogRemoteAddr LogField = 1 << iota
	// LogUserAgent adds user_agent: the request's User-Agent field, when it has one.
	LogUserAgent
	// LogReferer adds referer: the request's Referer field, when it has one.
	LogReferer
	// LogRequestBytes adds request_bytes: the body's length the request declared
	// (Content-Length), when it declared one.
	LogRequestBytes
	// LogTraceID adds trace_id: the id of the request's trace (SetTraceID, which a tracing
	// middleware calls), when it has one.
	LogTraceID
	// LogHost adds host: the host the request was for (its Host field).
	LogHost
)

// logExtra is what the optional fields and AddLogAttrs put on a line.
type logExtra struct {
	remote                            netip.Addr
	userAgent, referer, traceID, host string
	requestBytes                      int64
	added                             []slog.Attr
}

// capture reads the fields asked for that are known before the handler runs.
func (e *logEntry) capture(c *core.Ctx) {
	x, f := &e.extra, e.fields
	x.requestBytes = -1
	if f == 0 {
		return
	}
	if f&LogUserAgent != 0 {
		x.userAgent = c.Header("User-Agent")
	}
	if f&LogReferer != 0 {
		x.referer = c.Header("Referer")
	}
	if f&LogRequestBytes != 0 {
		x.requestBytes = c.ContentLength()
	}
	if f&LogHost != 0 {
		x.host = c.Host()
	}
}

// captureLate reads, once the handler has returned, what middleware inside the access log or
// the handler may have set, and the request id and route, which middleware outside it may have.
func (e *logEntry) captureLate(c *core.Ctx) {
	e.id, e.route = RequestID(c), c.Seam().RouteLabel()
	x, f := &e.extra, e.fields
	if f&LogRemoteAddr != 0 {
		x.remote = ClientIP(c)
	}
	if f&LogTraceID != 0 {
		x.traceID = TraceID(c)
	}
	if logAttrsAdded.Load() { // the lookup only in a program that adds attributes at all
		if v, ok := c.Value(logAttrsKey).([]slog.Attr); ok {
			x.added = v
		}
	}
}

// attrs appends the extra attributes to a.
func (x *logExtra) attrs(a []slog.Attr, f LogField) []slog.Attr {
	if x.remote.IsValid() {
		a = append(a, slog.String("remote_addr", x.remote.String()))
	}
	if x.host != "" {
		a = append(a, slog.String("host", x.host))
	}
	if x.userAgent != "" {
		a = append(a, slog.String("user_agent", x.userAgent))
	}
	if x.referer != "" {
		a = append(a, slog.String("referer", x.referer))
	}
	if f&LogRequestBytes != 0 && x.requestBytes >= 0 {
		a = append(a, slog.Int64("request_bytes", x.requestBytes))
	}
	if x.traceID != "" {
		a = append(a, slog.String("trace_id", x.traceID))
	}
	return append(a, x.added...)
}

// logAttrsKey is the key of the attributes AddLogAttrs adds.
var logAttrsKey any = &valueKey{"log attributes"}

// logAttrsAdded is set by the first AddLogAttrs of the process.
var logAttrsAdded atomic.Bool

// AddLogAttrs adds attributes to the request's access-log line: the user a middleware
// authenticated, a tenant, a cache's hit or miss. Call it before the handler returns (in a
// middleware inside AccessLog, or in the handler); the attributes follow the access log's own.
// Without an access log it has no effect but the request value it sets.
func AddLogAttrs(c *core.Ctx, attrs ...slog.Attr) {
	if !logAttrsAdded.Load() {
		logAttrsAdded.Store(true)
	}
	prev, _ := c.Value(logAttrsKey).([]slog.Attr)
	all := make([]slog.Attr, 0, len(prev)+len(attrs))
	c.SetValue(logAttrsKey, append(append(all, prev...), attrs...))
}

// String returns the field's attribute key.
func (f LogField) String() string {
	switch f {
	case LogRemoteAddr:
		return "remote_addr"
	case LogUserAgent:
		return "user_agent"
	case LogReferer:
		return "referer"
	case LogRequestBytes:
		return "request_bytes"
	case LogTraceID:
		return "trace_id"
	case LogHost:
		return "host"
	}
	return "LogField(" + strconv.Itoa(int(f)) + ")"
}
