// Package http1 is HTTP/1.1 (RFC 9112) on dwell's loops: the server's First, the protocol every
// connection speaks from its first byte. A connection is package serve's Socket; HTTP/1.1's
// conn is that Socket seen through its methods (conn.go), and the Socket calls it through the
// First for its input, its exchange and its deadline. It reads requests' heads into the loop's
// buffer in sizes that follow what the client sends, parses them in place (core/internal/wire)
// and runs each request's handler one after another, pipelined ones in one turn (request.go),
// and as each request's Exchange it reads the body from the socket and frames the response's
// head, interim responses, chunks and trailers into the connection's write queue, with the
// waits and deadlines of a handler on the socket and the 101 that hands the connection over to
// another protocol (exchange.go). Before a connection's first request it asks the server's
// Multiplexer whether the first bytes are another protocol's (HTTP/2's preface); it imports no
// other protocol. Everything it uses of the server is what package serve exports.
//
// Its tests are the server's, through HTTP/1.1: a package's tests cannot import a package above
// it, and every test of a server's behaviour — the Ctx, parking, the hand-over, TLS, the
// statistics — needs a protocol to drive it, so serve's tests live here, beside the protocol
// that drives them (serve keeps only its layout tests).
package http1
