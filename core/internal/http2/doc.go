// Package http2 is HTTP/2 (RFC 9113) on dwell's loops: the server's Multiplexer (mux.go), which
// HTTP/1.1 asks, before a connection's first request, whether the connection's first bytes are
// the client preface — h2c with prior knowledge, or what a TLS client that chose "h2" by ALPN
// sends — and which then takes the connection over as a Protocol (conn.go). The connection takes
// the frames apart (core/internal/h2), answers its own (SETTINGS, PING, WINDOW_UPDATE, GOAWAY),
// decodes each field block into a request (headers.go) and makes every stream a request with a
// Ctx of its own, served by the same handlers as an HTTP/1.1 request: a stream is its
// request's Exchange (stream.go, exchange.go), its output framed as DATA within the
// flow-control windows (send.go), its head and trailers as HEADERS (response.go). Everything
// it uses of the server is what package serve exports for it.
package http2
