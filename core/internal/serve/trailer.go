package serve

import (
	"strings"

	"github.com/dwellhttp/dwell/internal/syntax"
)

// Response trailers: fields sent after the body (RFC 9110 §6.5) — the trailer section of a
// chunked body over HTTP/1.1, the HEADERS frame that ends the stream over HTTP/2. gRPC's status
// travels in them.

// SetTrailer sets a trailer field of the response, replacing any of the same name. It may be
// called until the handler (or its continuation) returns, before or after the head went out.
// A response that has trailers when its head goes out streams: over HTTP/1.1 its body is
// chunked (an HTTP/1.0 client, which chunked coding cannot reach, gets no trailers), so that
// the trailers can follow it; over HTTP/2 they end the stream whatever the body. Over HTTP/1.1
// a declared Content-Length frames the body instead, as in net/http, and the trailers are
// dropped, whenever they were set: the length leaves them nowhere to go. The framing fields (Content-Length, Transfer-Encoding, Host, Trailer, Connection)
// cannot be trailers and are ignored; an invalid name or value panics, as in SetHeader.
func (cx *Ctx) SetTrailer(name, value string) {
	cx.check("SetTrailer")
	checkName(name)
	CheckValue(name, value)
	if cx.Resp&RfFinished != 0 || notTrailer(name) {
		return
	}
	r := cx.rare()
	for i := 0; i < len(r.TrailerSet); i += 2 {
		if syntax.EqualFold(r.TrailerSet[i], name) {
			r.TrailerSet[i+1] = value
			return
		}
	}
	r.TrailerSet = append(r.TrailerSet, name, value)
}

// notTrailer reports whether a field may not be sent as a trailer (RFC 9110 §6.5.1: framing,
// routing and the trailer's own declaration).
func notTrailer(name string) bool {
	switch strings.ToLower(name) {
	case "content-length", "transfer-encoding", "host", "trailer", "connection", "keep-alive", "te", "upgrade":
		return true
	}
	return false
}
