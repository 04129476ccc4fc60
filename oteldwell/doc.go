// Package oteldwell reports what a dwell server does to OpenTelemetry: the HTTP server metrics
// and spans of OpenTelemetry's semantic conventions for each request, and the server's own
// statistics (core.Server.Stats) as asynchronous instruments.
//
// Three pieces, each usable alone:
//
//   - Metrics, a middleware recording http.server.request.duration,
//     http.server.active_requests and the request and response body sizes, labelled by method,
//     route pattern, status and scheme;
//   - Tracing, a middleware that continues the caller's trace (W3C traceparent and
//     tracestate, or whatever the propagators read), starts a server span for the request and
//     hands it to the handler through c.Context(), so that the handler's own spans and outgoing
//     requests belong to the same trace;
//   - ObserveServer, which reports the server's connections by state, its requests, its own
//     answers (400, 408, 413...), bytes, stalls and TLS handshakes under dwell.server.*.
//
// Both middlewares observe the response's end with core.Ctx.OnDone rather than the handler
// returning, so that what they record is what went out, whoever finished it: the handler, its
// continuation after Detach, or the server itself (a 413 for a body over the limit, a 503 at
// shutdown, a 500 after a panic). What they need of the request (method, route, scheme) is
// captured while the handler runs, since the request's values are gone by then.
//
// # Where they go
//
// Given to router.Router.Use, they run around the routes and around the router's own answers
// (its redirects, 404s and 405s) alike, and see the route pattern (core.Ctx.Route) from the
// start; around the router's Handler they learn it once the router has matched, after the
// handler returns. Tracing goes before Metrics, so that the histograms' exemplars name the
// request's span, and before the access log, so that its lines can carry the trace id
// (middleware.SetTraceID); middleware.RealIP goes before Tracing, so that client.address is
// the client behind the proxies:
//
//	metrics, err := oteldwell.Metrics(oteldwell.Options{})
//	if err != nil { ... }
//	r := router.New()
//	r.Use(
//		middleware.RealIP(middleware.RealIPOptions{...}),
//		oteldwell.Tracing(oteldwell.Options{}),
//		metrics,
//		middleware.AccessLog(logger),
//	)
//
// The zero Options use OpenTelemetry's global providers and propagator (otel.SetMeterProvider,
// otel.SetTracerProvider, otel.SetTextMapPropagator), which do nothing until the program sets
// them.
//
// # Collection
//
// ObserveServer's callback calls core.Server.Stats, which waits for each loop's copy: collect
// off the loops (a periodic reader, or a Prometheus exporter's handler run through wait.Do),
// never from a handler directly.
//
// # Costs
//
// The recording path keeps no closure per request: what a request needs until its end lives in
// pooled entries, and the attribute sets of the metrics are made once per combination of
// method, route, status, scheme and error and kept. With the SDK's meter and a ManualReader a
// request costs Metrics no allocation of its own (TestAllocsPerRequest measures it).
package oteldwell
