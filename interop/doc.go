// Package interop tests dwell with the WebSocket libraries people bring along, and against the
// protocol itself. Through the net/http bridge (package nethttp), gorilla/websocket's Upgrader
// and coder/websocket's Accept hijack the connection, and must work on dwell unchanged. Against
// dwell's native package websocket, both libraries' clients must interoperate: echoes, fragments,
// pings, the close handshake, compression, subprotocols, origins. And a conformance suite
// modelled on the Autobahn|Testsuite fuzzing client's cases (1 to 10, 12 and 13), with a client
// written from RFC 6455 and RFC 7692 alone, runs against examples/websocket built and started as
// its users run it. HTTP/2, over h2c and TLS, is tried with clients dwell did not write: Go's
// (golang.org/x/net/http2's Transport and net/http's), curl, nghttp and h2load, and the h2spec
// conformance suite. TLS is tried with curl and openssl s_client. It is a module of its own so
// that dwell's main module keeps its few dependencies; it holds tests only.
package interop
