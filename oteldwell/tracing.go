package oteldwell

import (
	"context"
	"errors"
	"sync"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/internal/labels"
	"github.com/dwellhttp/dwell/middleware"
)

// Tracing returns a middleware that makes a server span of each request, with o's tracer
// provider, continuing the trace the request's header fields carry (W3C traceparent and
// tracestate with propagation.TraceContext, whatever o.Propagators reads).
//
// The span is named "METHOD /route/pattern" after the route that matched (core.Ctx.Route), or
// just "METHOD" when none did (the router's own 404s, 405s and redirects), so that names stay
// few; a method the semantic conventions do not list is "HTTP". Its attributes are those of
// the conventions: http.request.method (and http.request.method_original for an unlisted
// method), url.path, url.scheme, http.route when a route matched, server.address and
// server.port from the Host, client.address (middleware.ClientIP: the client behind trusted
// proxies when middleware.RealIP runs first), network.peer.address and network.peer.port,
// network.protocol.version, user_agent.original, and once the response has ended
// http.response.status_code and, for one that failed, error.type (as Metrics gives it). The
// query is left out, as the access log leaves it out: it may carry secrets. The span's status
// is Error for a 5xx and for a response that did not end normally (core.Done.Err, which is
// its description; a panic is also recorded as an exception event); a 4xx leaves it unset.
//
// The span ends when the response does (core.Ctx.OnDone), whoever finished it. While the
// request lasts, it is in the request's values: trace.SpanFromContext(c.Context()) returns it,
// so that the handler's own spans are its children, and the propagator injects it into an
// outgoing request's header fields from c.Context() — a context that may go to the goroutine
// making the request, wait.Do's. The trace id is also given to middleware.SetTraceID, for the
// access log and the handler.
func Tracing(o Options) func(core.Handler) core.Handler {
	t := &tracing{tracer: o.tracer(), prop: o.propagators(), names: labels.New(spanName, 0)}
	return t.wrap
}

// tracing is a Tracing middleware's tracer and the span names it has made.
type tracing struct {
	tracer trace.Tracer
	prop   propagation.TextMapPropagator
	names  *labels.Cache[nameKey, string]
}

// A nameKey is what a span's name is made of.
type nameKey struct{ method, route string }

func spanName(k nameKey) string {
	m := k.method
	if m == labels.Other {
		m = "HTTP" // the semantic conventions' name for a method they do not list
	}
	if k.route == "" {
		return m
	}
	return m + " " + k.route
}

// serverKind is the span kind option, made once.
var serverKind = trace.WithSpanKind(trace.SpanKindServer)

func (t *tracing) wrap(next core.Handler) core.Handler {
	return func(c *core.Ctx) {
		// The parent comes from the request's fields alone: the request's own context must not
		// be the parent of what is handed back to SetValuesFrom.
		ctx := t.prop.Extract(context.Background(), carrier{c})
		method := c.Method()
		norm := labels.Method(method)
		route := c.Route()
		ctx, span := t.tracer.Start(ctx, t.names.Get(nameKey{norm, route}), serverKind,
			trace.WithAttributes(startAttributes(c, method, norm, route)...))
		c.Seam().SetValuesFrom(&spanContext{ctx})
		if sc := span.SpanContext(); sc.HasTraceID() {
			middleware.SetTraceID(c, sc.TraceID().String())
		}
		e := spanEntries.Get().(*spanEntry)
		e.span = span
		c.OnDone(e.done)
		if route == "" {
			// Around the router's Handler, rather than in its Use, the route is known only once
			// the handler has returned, or panicked (the 500 the server then answers is the
			// span's). The hook has not run yet: it runs once the handler, of which this
			// middleware is a part, has returned.
			defer t.routeLate(c, span, norm)
		}
		next(c)
	}
}

// routeLate names the span after the route a router this middleware wraps has matched.
func (t *tracing) routeLate(c *core.Ctx, span trace.Span, norm string) {
	if route := c.Route(); route != "" {
		span.SetName(t.names.Get(nameKey{norm, route}))
		span.SetAttributes(semconv.HTTPRouteKey.String(route))
	}
}

// startAttributes returns the span's attributes known when the request starts, for the
// sampler to see.
func startAttributes(c *core.Ctx, method, norm, route string) []attribute.KeyValue {
	kvs := make([]attribute.KeyValue, 0, 14)
	kvs = append(kvs,
		semconv.HTTPRequestMethodKey.String(norm),
		semconv.URLPathKey.String(c.Path()),
		semconv.URLSchemeKey.String(c.Scheme()),
		semconv.NetworkProtocolVersionKey.String(protocolVersion(c.Proto())),
	)
	if norm == labels.Other {
		kvs = append(kvs, semconv.HTTPRequestMethodOriginalKey.String(method))
	}
	if route != "" {
		kvs = append(kvs, semconv.HTTPRouteKey.String(route))
	}
	if host, port := splitHost(c.Host()); host != "" {
		kvs = append(kvs, semconv.ServerAddressKey.String(host))
		if port != 0 {
			kvs = append(kvs, semconv.ServerPortKey.Int(port))
		}
	}
	peer := c.RemoteAddr()
	peerIP := peer.Addr().Unmap().String()
	if ip := middleware.ClientIP(c); ip.IsValid() {
		client := peerIP // the client is the peer, unless RealIP found it behind proxies
		if ip != peer.Addr().Unmap() {
			client = ip.String()
		}
		kvs = append(kvs, semconv.ClientAddressKey.String(client))
	}
	if peer.IsValid() {
		kvs = append(kvs,
			semconv.NetworkPeerAddressKey.String(peerIP),
			semconv.NetworkPeerPortKey.Int(int(peer.Port())))
	}
	if ua := c.Header("User-Agent"); ua != "" {
		kvs = append(kvs, semconv.UserAgentOriginalKey.String(ua))
	}
	return kvs
}

func protocolVersion(proto string) string {
	switch proto {
	case "HTTP/1.0":
		return "1.0"
	case "HTTP/2.0":
		return "2"
	}
	return "1.1"
}

// A spanEntry holds a request's span until its response ends. Entries are pooled, each with
// its hook made once, so that a request costs no closure.
type spanEntry struct {
	span trace.Span
	done func(core.Done) // e.end
}

var spanEntries sync.Pool

func init() {
	spanEntries.New = func() any {
		e := new(spanEntry)
		e.done = e.end
		return e
	}
}

// end completes the span with the response's outcome, ends it, and puts the entry back in the
// pool.
func (e *spanEntry) end(d core.Done) {
	span := e.span
	*e = spanEntry{done: e.done}
	spanEntries.Put(e)
	if !span.IsRecording() {
		span.End()
		return
	}
	status := semconv.HTTPResponseStatusCodeKey.Int(d.Status)
	if et := errorType(d); et != "" {
		span.SetAttributes(status, semconv.ErrorTypeKey.String(et))
	} else {
		span.SetAttributes(status)
	}
	var pe *core.PanicError
	switch {
	case d.Err != nil:
		if errors.As(d.Err, &pe) {
			span.RecordError(d.Err)
		}
		span.SetStatus(codes.Error, d.Err.Error())
	case d.Status >= 500:
		// No description: the conventions leave it out when the status code tells.
		span.SetStatus(codes.Error, "")
	}
	span.End()
}

// spanKey is the key under which a request's values answer the context Tracing made, for
// Span and for Metrics' exemplars.
type spanKey struct{}

// A spanContext is the context Tracing hands to core.Seam.SetValuesFrom: the span (and the
// caller's baggage) on a context of its own, which also answers spanKey with itself so that
// this package finds it without making the request's Context.
type spanContext struct{ context.Context }

// Value returns the embedded context for spanKey, and the embedded context's values otherwise.
func (s *spanContext) Value(key any) any {
	if key == (spanKey{}) {
		return s.Context
	}
	return s.Context.Value(key)
}

// spanContextOf returns the context Tracing made for c's request, or nil.
func spanContextOf(c *core.Ctx) context.Context {
	ctx, _ := c.Value(spanKey{}).(context.Context)
	return ctx
}

// Span returns the span Tracing started for the request, or a non-recording span without a
// trace when Tracing did not run (as trace.SpanFromContext does). It is
// trace.SpanFromContext(c.Context()) without making the request's Context: for the handler's
// own spans, events and attributes, while the request lasts.
func Span(c *core.Ctx) trace.Span {
	return trace.SpanFromContext(orBackground(spanContextOf(c)))
}

// A carrier reads a request's header fields for a propagator's Extract.
type carrier struct{ c *core.Ctx }

// Get returns the first value of the field key.
func (h carrier) Get(key string) string { return h.c.Header(key) }

// Values returns every value of the field key, for a field sent on several lines (tracestate,
// baggage).
func (h carrier) Values(key string) []string {
	var all []string
	for v := range h.c.Bytes().HeaderValues(key) {
		all = append(all, string(v))
	}
	return all
}

// Set does nothing: a request's fields are read, never written.
func (carrier) Set(string, string) {}

// Keys returns the names of the request's fields.
func (h carrier) Keys() []string {
	var keys []string
	for name := range h.c.Headers() {
		keys = append(keys, name)
	}
	return keys
}

var (
	_ propagation.TextMapCarrier = carrier{}
	_ propagation.ValuesGetter   = carrier{}
)
