// Package promdwell exposes a dwell server to Prometheus: the server's statistics
// (core.Server.Stats) as a Collector, the HTTP server metrics of OpenTelemetry's semantic
// conventions in Prometheus's spelling as a middleware, and a /metrics handler that gathers off
// the loop.
//
//	reg := prometheus.NewRegistry()
//	reg.MustRegister(promdwell.NewCollector(srv))
//	m := promdwell.NewMetrics(reg)
//	r := router.New()
//	r.Use(m.Middleware)
//	r.GET("/metrics", promdwell.Handler(reg))
//
// The middleware records, labelled by http_request_method, http_route,
// http_response_status_code and url_scheme:
//
//   - http_server_request_duration_seconds, a histogram with the buckets OpenTelemetry advises
//     (5 ms to 10 s): from the request's head being read to its response being queued whole,
//     whoever finished it — the handler, a continuation, or the server's own 413, 503 or 500;
//   - http_server_request_body_size_bytes, the length a request's body declared
//     (Content-Length; a body of no declared length, chunked or HTTP/2's without one, is not
//     observed), and
//     http_server_response_body_size_bytes, the body bytes sent;
//
// and http_server_active_requests, a gauge labelled by http_request_method and url_scheme.
// http_route is the route's pattern ("/todos/:id"), or for the router's own answers its label
// ("(not found)", "(method not allowed)", "(redirect)", "(options)": core.Seam.RouteLabel), so
// that every request is counted once under a bounded set of values; "" when no router served
// the request. Methods other than RFC 9110's, PATCH and QUERY are counted as "_OTHER", as
// OpenTelemetry says, so that a client cannot make series without bound.
//
// Recording allocates nothing per request once a label combination has been seen: the series
// are cached by their labels.
//
// This package is a module of its own, so that dwell itself does not depend on
// client_golang.
package promdwell
