// Package nethttp runs net/http handlers on dwell: pprof, expvar, http.FileServer,
// httputil.ReverseProxy, a library's http.Handler. Handler makes a dwell handler of one; the
// router's HandleHTTP and Mount register them on routes.
//
// A net/http handler runs on a goroutine of a bounded pool (see SetWorkers), never on a loop,
// while the dwell handler that started it parks and does on its behalf what only the loop may
// do — read the request body, write the response — one call at a time (see exchange). So
// r.Body and the ResponseWriter stream both ways with dwell's backpressure, and r.Context() is
// the request's own. A handler waiting for its client holds no place in the pool (wait.go). A
// handler that hijacks its connection gets a net.Conn that the loop serves (hijack.go).
package nethttp

import (
	"errors"
	"fmt"
	"net/http"
	"runtime/debug"
	"strings"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/internal/workers"
)

// Handler returns a dwell handler that serves each request with the net/http handler h:
// pprof, expvar, http.FileServer, httputil.ReverseProxy, a library's http.Handler.
//
// h runs on a goroutine of its own, from a bounded pool (see SetWorkers), so it may block
// as net/http handlers do. Its *http.Request carries the method, target (URL, RequestURI),
// protocol, header fields (owned copies, canonical keys), Host, RemoteAddr, ContentLength,
// TransferEncoding, Close, the route's parameters (r.PathValue) and the request's context,
// which is cancelled when the client goes away, when a shutdown's grace period ends, and when h
// returns. r.Body streams: each Read waits for the next bytes from the client (the first sends
// 100 Continue to a client that expects it), and r.Trailer is filled in at the end of a chunked
// body.
//
// The ResponseWriter follows net/http's rules: WriteHeader sends 1xx interim responses (103
// Early Hints) at once, a second WriteHeader is ignored and logged (to slog's default logger),
// 204 and 304 take no body, a Content-Type is sniffed from the first bytes when none is set.
// Header fields go out as net/http writes them: an invalid name is dropped, a CR or LF in a
// value becomes a space. Writes are buffered (4 KiB) and handed to the loop, which parks h while
// the client is slow; a response written whole before h returns goes out with a Content-Length
// (up to core.Options.WriteHighWater), a longer or flushed one streams. It implements
// http.Flusher, io.ReaderFrom (files go out with sendfile), http.Hijacker and, through
// http.NewResponseController, FlushError, Hijack and EnableFullDuplex (dwell reads and writes a
// request at once anyway). SetReadDeadline and SetWriteDeadline report http.ErrNotSupported:
// dwell's timeouts are core.Options.BodyTimeout and WriteTimeout, which measure progress, and
// core.Ctx.SetTimeout for a whole request, in a middleware of the route.
//
// Hijack is there for gorilla/websocket, coder/websocket and any other net/http upgrade, which work
// unchanged. The connection stays on its loop (core.Ctx.HandOver), which serves the net.Conn Hijack
// returns: Read waits for the client's bytes, those that came behind the request's head first (the
// returned bufio.Reader holds none; of those, core keeps today only what may start another request,
// which a client that waits for the 101, as a WebSocket client must, never notices); Write hands
// its bytes to the loop and returns, waiting first while the connection holds more than
// core.Options.WriteHighWater for a slow client; the deadlines are a net.Conn's (a Read or Write
// waiting when one passes returns os.ErrDeadlineExceeded); Close closes the connection once what
// was written has gone. Once the client has left, Read returns io.EOF and Write an error; a server
// shutting down ends the input the same way, so that a handler reading its connection ends, while
// its writes still go out until the grace period's end.
//
// What Hijack sends first is what net/http sends: nothing when no status was set
// (gorilla/websocket writes its own 101); after WriteHeader(101), coder/websocket's way, the
// 101 with the header fields (and Connection: Upgrade, which core adds; a Flush in between
// leaves the 101 to Hijack); after another status, the head as net/http sends it then, the bytes
// written but not flushed dropped, as there. A request whose body has not been read to its end
// cannot be hijacked, nor a response part of which has gone out (a Flush, a large Write): Hijack
// reports an error and the response goes on as HTTP, where net/http would hand the unread body
// over raw, or hijack after the part sent. After Hijack, Write, Flush, ReadFrom and Hijack
// return http.ErrHijacked and WriteHeader is logged and ignored, as in net/http; r.Context()
// lives until h returns or the connection closes — the client leaving, a shutdown's grace period
// ending, h's own Close — where net/http's lives until h returns; a panic of h is logged; a
// net.Conn dropped unclosed is closed once collected. The request's deadline
// (core.Ctx.SetTimeout) no longer applies, and the fields a dwell middleware of the route set go
// out only with a 101. A hijacked connection costs the goroutine that keeps it — h's, or the
// library's own — but no place in the pool (see SetWorkers): an idle gorilla/websocket echo
// costs about 17 KB, the goroutine's stack and the 8 KiB of bufio buffers Hijack returns among
// them, about what it costs on net/http's own server (see docs/operations.md).
//
// A panic in h is the dwell handler's: the server answers 500 if nothing was sent, else cuts
// the response short; panic(http.ErrAbortHandler) cuts it without logging. An h that sets no
// status and writes nothing leaves the server's own answer standing, where it has one: 413 for
// a body over the limit, 503 at the end of a shutdown or past the request's deadline.
//
// An HTTP/2 extended CONNECT (RFC 8441, core.Seam.ConnectProtocol: a browser's WebSocket over
// HTTP/2) never reaches h, which could not open the tunnel it asks for: it is answered 501 Not
// Implemented (core.ErrTunnelRefused) before h runs, as net/http's own server, by default,
// serves none. WebSocket over HTTP/2 is a dwell handler's (websocket.Accept); over HTTP/1.1, h
// upgrades with Hijack as above.
//
// Response trailers are bridged (http.TrailerPrefix, and the fields the Trailer field
// declared, are sent after the body), though the Trailer field itself is not sent in the head.
// A nil or empty Content-Type gives the response none, as does a Content-Encoding without one;
// a nil Date does not suppress the server's. A response flushed before its first byte gets
// dwell's default Content-Type, text/plain, where net/http would send none. Not bridged:
// http.LocalAddrContextKey in the request's context; and a request's RemoteAddr is
// "invalid AddrPort" when its client reset the connection before the handler started.
//
// The returned handler must run as the request's handler (or inside its middleware), not from
// a continuation (core.Ctx.Detach): there it panics.
func Handler(h http.Handler) core.Handler { return defaultPool.Handler(h) }

// serveHTTP serves c with h, run in pool's places.
func serveHTTP(c *core.Ctx, h http.Handler, pool *workers.Pool) {
	if c.Seam().ConnectProtocol() != "" {
		refuseTunnel(c)
		return
	}
	x := exchanges.Get().(*exchange)
	x.h, x.pool = h, pool
	x.collect(c)
	if x.target == "" {
		// Every request has a target, but in a continuation the request's values are gone:
		// there the handler could not park to serve the goroutine.
		x.release()
		panic(errNotInHandler)
	}
	pool.Start(x)
	if v := x.serveCalls(c); v != nil {
		panic(v)
	}
}

// refuseTunnel answers an HTTP/2 extended CONNECT (RFC 8441) in the net/http handler's place:
// 501 Not Implemented, the answer core gives any 2xx of a handler that did not hand the stream
// over (core.ErrTunnelRefused), in the server's refusal format when it has one.
//
// net/http's own server has two ways with such a request. By default it offers no extended
// CONNECT (it sends no SETTINGS_ENABLE_CONNECT_PROTOCOL) and resets a stream that carries
// :protocol as malformed (PROTOCOL_ERROR); with GODEBUG=http2xconnect=1 it hands the handler a
// CONNECT whose r.Header has ":protocol", for a handler that answers 200 and then reads r.Body
// and writes the response as the tunnel. Neither fits here. The client was invited — dwell
// announces the setting for its own handlers, which hand the stream over (core.Ctx.HandOver,
// websocket.Accept) — so its request is well formed, and a reset would blame it; and the
// bridge has no tunnel to give a net/http handler: core serves an extended CONNECT for
// WebSocket as the GET it stands for, so the handler (or a ReverseProxy's backend) would see a
// GET with a body that never ends, and a 200 of its own opens nothing (Hijack is not supported
// on an HTTP/2 stream). So the bridge keeps net/http's default — no extended CONNECT reaches a
// handler — and says so with the status a client reports as a failed handshake.
func refuseTunnel(c *core.Ctx) {
	if !c.Refuse(http.StatusNotImplemented, core.ErrTunnelRefused) { // the server has no WriteRefusal
		c.SetStatus(http.StatusNotImplemented)
		c.SetHeader("Content-Type", "text/plain; charset=utf-8")
		c.WriteString("501 Not Implemented: this resource opens no tunnel for an extended CONNECT\n")
	}
}

// collect copies from c what the goroutine needs to build the *http.Request: owned strings
// only, since the request's memory is the loop's.
func (x *exchange) collect(c *core.Ctx) {
	x.method = c.Method()
	x.target = c.Target()
	x.proto = c.Proto()
	for name, value := range c.Headers() {
		if x.host == "" && strings.EqualFold(name, "Host") {
			x.host = value // net/http moves Host out of the header map into r.Host
			continue
		}
		x.fields = append(x.fields, name, value)
	}
	if x.target != "*" && !strings.HasPrefix(x.target, "/") {
		x.host = c.Host() // RFC 9112 §3.2.2: the absolute-form target's authority wins
	}
	x.remote = c.RemoteAddr().String()
	x.tls = c.TLS()
	x.contentLength = c.ContentLength()
	x.chunked = c.Seam().Chunked()
	// An HTTP/2 request's body may have no length: it is there until the stream's end.
	x.hasBody = x.chunked || x.contentLength > 0 || x.proto == "HTTP/2.0" && !c.Seam().BodyDone()
	for k, v := range c.Params() {
		x.params = append(x.params, k, v)
	}
	x.ctx = c.Context()
	x.loop = c.Seam().Loop()
}

// run is the goroutine's side: it builds the request, runs the handler and finishes the
// response, passing on a panic or a runtime.Goexit of the handler to the dwell handler.
func (x *exchange) Run() {
	s := &handlerState{}
	s.w.x = x
	s.w.declLen = -1
	r, err := x.request(&s.body)
	if err != nil {
		// The server accepted a target that net/url does not: answer as net/http would.
		s.w.header = http.Header{"Content-Type": {"text/plain; charset=utf-8"}, "Connection": {"close"}}
		s.w.WriteHeader(http.StatusBadRequest)
		s.w.WriteString("400 Bad Request: " + err.Error() + "\n")
		s.finish(nil)
		return
	}
	s.body.x, s.body.req = x, r
	returned := false
	defer func() {
		if returned {
			return
		}
		v := recover()
		switch {
		case v == nil: // runtime.Goexit
			v = &handlerPanic{value: "runtime.Goexit called by a net/http handler", stack: debug.Stack()}
		case v == http.ErrAbortHandler:
			v = core.ErrAbortHandler
		default:
			v = &handlerPanic{value: v, stack: debug.Stack()}
		}
		s.finish(v)
	}()
	x.h.ServeHTTP(&s.w, r)
	returned = true
	s.finish(nil)
}

// handlerState is what one net/http handler holds: made per request, so that a writer or body
// kept past the handler (a mistake) can only fail, never reach another request.
type handlerState struct {
	w    responseWriter
	body bodyReader
}

// finish hands the response's end to the loop. Nothing of x is touched after that: the loop
// recycles it.
func (s *handlerState) finish(panicV any) {
	s.body.release()
	s.w.finish(panicV)
}

// A handlerPanic carries a net/http handler's panic to the dwell handler, which raises it
// again so that the server answers it; it names the handler's goroutine stack, which is where
// the panic happened.
type handlerPanic struct {
	value any
	stack []byte
}

func (p *handlerPanic) Error() string {
	return fmt.Sprintf("panic in a net/http handler: %v\n\nhandler goroutine:\n%s", p.value, p.stack)
}

var (
	errHandlerDone   = errors.New("dwell: net/http ResponseWriter or Body used after its handler returned")
	errNotInHandler  = errors.New("dwell: the handler of nethttp.Handler ran outside a request's handler (in a continuation?)")
	errHandlerFailed = errors.New("dwell: the dwell handler serving this net/http handler panicked")
)
