package middleware

import "github.com/dwellhttp/dwell/core"

// traceIDKey is the type of TraceIDKey, of this package's own so that no other package's key
// can equal it.
type traceIDKey struct{}

// TraceIDKey is the key under which SetTraceID stores the request's trace id, a string.
var TraceIDKey any = traceIDKey{}

// SetTraceID records the id of the trace the request belongs to (32 hexadecimal digits in W3C
// Trace Context), for the access log's trace_id field (LogTraceID) and for the handler: a
// tracing middleware calls it once it has started the request's span. It must run before the
// handler returns, inside or outside AccessLog.
func SetTraceID(c *core.Ctx, id string) { c.SetValue(TraceIDKey, id) }

// TraceID returns the id SetTraceID recorded for the request, or "".
func TraceID(c *core.Ctx) string {
	id, _ := c.Value(TraceIDKey).(string)
	return id
}
