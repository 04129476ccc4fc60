package serve

import (
	"iter"
	"net/netip"
	"strings"

	"github.com/dwellhttp/dwell/core/internal/wire"
)

// The request side of a Ctx. Strings are owned copies; the slices of its Bytes view
// (ctxbytes.go) are borrowed (see Ctx) and must not be modified.

// Method returns the request method, such as "GET". The standard methods are returned as
// constants, without an allocation.
func (cx *Ctx) Method() string {
	cx.check("Method")
	return cx.Req.MethodString()
}

// Target returns the request-target exactly as received, such as "/a%20b?x=1".
func (cx *Ctx) Target() string {
	cx.check("Target")
	return string(cx.Req.Bytes(cx.Req.Target))
}

// Path returns the target's path, percent-decoded ("/a b"); "*" for "OPTIONS *"; "/" for an
// absolute-form target without a path.
func (cx *Ctx) Path() string {
	cx.check("Path")
	b := cx.Req.Bytes(cx.Req.Path)
	if len(b) == 1 && b[0] == '/' {
		return "/"
	}
	return string(b)
}

// RawQuery returns the target's query without the "?", undecoded.
func (cx *Ctx) RawQuery() string {
	cx.check("RawQuery")
	return string(cx.Req.Bytes(cx.Req.RawQuery()))
}

// Query returns the first value of the query parameter name, decoded ('+' is a space), or ""
// when absent. The Bytes view reads it without the copy, and also says whether it is there
// (RequestBytes.Query) or reads every value (RequestBytes.QueryValues).
func (cx *Ctx) Query(name string) string {
	cx.check("Query")
	v, _ := cx.Req.QueryValue(name)
	return string(v)
}

// Proto returns "HTTP/2.0" for a request on an HTTP/2 stream, else "HTTP/1.1" or "HTTP/1.0".
// Requests with a higher 1.x minor version are served as 1.1 and report "HTTP/1.1".
func (cx *Ctx) Proto() string {
	cx.check("Proto")
	return cx.Exchange.Proto()
}

// ConnectProtocol returns the protocol an HTTP/2 extended CONNECT asks for (RFC 8441's
// :protocol) — "websocket" for a WebSocket a browser opens on its HTTP/2 connection — and ""
// for every other request. An extended CONNECT for "websocket" is served as the GET whose
// upgrade it replaces (RFC 8441 §5): Ctx.Method reports GET, routes for GET serve it, and
// Ctx.HandOver answers it (200, not 101) and hands its stream over — and only HandOver: any
// other 2xx a handler gives it goes out as the server's 501 (ErrTunnelRefused), since the
// client would read a 2xx as its tunnel open. One for another protocol keeps its method,
// CONNECT (see Options.AllowCONNECT). Options.DisableConnectProtocol stops clients from
// sending any.
func (s Seam) ConnectProtocol() string {
	cx := s.cx
	cx.check("Seam().ConnectProtocol")
	return cx.Exchange.ConnectProtocol()
}

// Host returns the authority the request is for: the absolute-form target's, else the Host
// header.
func (cx *Ctx) Host() string {
	cx.check("Host")
	if a := cx.Req.Authority(); len(a) > 0 {
		return string(a) // RFC 9112 §3.2.2: an absolute-form target's authority replaces Host
	}
	return cx.Header("Host")
}

// Header returns the value of the first header field named name (case-insensitive), or "". The
// Bytes view reads it without the copy, and also says whether the field is there
// (RequestBytes.Header) or reads every field of the name (RequestBytes.HeaderValues).
func (cx *Ctx) Header(name string) string {
	cx.check("Header")
	v, _ := cx.Req.Lookup(name)
	return string(v)
}

// Headers iterates over the request's header fields in the order received, with names as
// sent and values trimmed of surrounding whitespace.
func (cx *Ctx) Headers() iter.Seq2[string, string] {
	cx.check("Headers")
	return func(yield func(string, string) bool) {
		cx.check("Headers")
		r := &cx.Req
		for _, f := range r.Fields() {
			if !yield(string(r.Bytes(f.Name)), string(r.Bytes(f.Value))) {
				return
			}
		}
	}
}

// ContentLength returns the request's declared Content-Length, or -1 when it has none (no body,
// or a chunked one).
func (cx *Ctx) ContentLength() int64 {
	cx.check("ContentLength")
	return cx.Req.ContentLength
}

// Chunked reports whether the request body uses the chunked transfer coding.
func (s Seam) Chunked() bool {
	s.cx.check("Seam().Chunked")
	return s.cx.Req.Has(wire.Chunked)
}

// RemoteAddr returns the client's address (the zero value once the connection is closed).
func (cx *Ctx) RemoteAddr() netip.AddrPort {
	cx.check("RemoteAddr")
	if cx.Exchange == nil {
		return netip.AddrPort{}
	}
	// Asked of the system the first time a request asks, then kept for the request: a
	// connection does not keep it, since few requests ask and every idle connection would pay.
	r := cx.rare()
	if !r.remote.IsValid() {
		r.remote = cx.Exchange.RemoteAddr()
	}
	return r.remote
}

// Route returns the pattern of the route that matched the request, as it was registered with
// the router ("/todos/:id", not the path), or "" when no route matched (the router's own
// redirects, 404, 405 and OPTIONS replies) or no router served it — as OpenTelemetry's
// http.route, which is left unset for a request no route matched. It is what traces and logs
// label a request by: a handful of values where paths would be without bound. Seam.RouteLabel
// also tells the router's own answers apart.
func (cx *Ctx) Route() string {
	cx.check("Route")
	if name := cx.routeName(); strings.HasPrefix(name, "/") {
		return name
	}
	return ""
}

// Param returns the value of the route parameter name, as set by the router that matched the
// request, or "". For the route "/users/:id" and the path "/users/42", Param("id") is "42"; a
// catch-all's value starts with '/'.
func (cx *Ctx) Param(name string) string { return string(cx.checkedParam("Param", name)) }
