package core

import (
	"context"
	"crypto/tls"
	"iter"
	"net"
	"net/netip"
	"os"
	"time"

	"github.com/dwellhttp/dwell/core/internal/serve"
	"github.com/dwellhttp/dwell/internal/alias"
)

// A Handler serves one request. It runs as a coroutine on its connection's loop: it may park
// (a body read, a write to a slow client, the wait package) without blocking the loop, but it
// must not block the thread — see package wait for blocking calls.
type Handler func(c *Ctx)

// A Ctx is one request and its response. It is valid until the handler returns (or, for a
// detached handler, until its continuation finishes) and is reused afterwards.
//
// # Who may use it
//
// Only the request's own code, while the request lasts: its handler, its continuation (Detach), and
// the hooks the server runs for it (OnDone, Seam.OnPanic, a body filter). A Ctx serves the next
// request once its own has ended, so every method first checks its caller (the Seam's too), and
// refuses any other — a goroutine the handler started, a wait.Do function, a Loop.Post callback or
// a timer, another request's handler, anything after the request ended — without touching the Ctx:
// the methods that return an error return ErrOutsideRequest, the others panic with it, and the
// first refusal of a server is logged with the caller's stack. Hand blocking work to wait.Do and
// use its result in the handler; wake a parked handler from elsewhere with a Waker; run code on the
// loop with Loop.Post (c.Seam().Loop(), which may be called from anywhere).
//
// # Owned and borrowed values
//
// Strings a Ctx returns (Method, Path, Query, Header, Param, ...) are the caller's to keep,
// as bufio.Scanner's Text is: each call copies the value out of the request (Method returns
// a constant for the common methods). Its Bytes view (RequestBytes) is the zero-copy way,
// like Scanner's Bytes: c.Bytes().Header(name) is a slice of the request's own memory, and
// borrowed (read it, never modify it), valid until the handler returns (across parks
// included) and reused by a later request after that. Copy what you keep. In builds with the
// race detector a request's memory is never reused and is overwritten with the text
// "dwell:freed " when the request ends, so a retained borrowed slice shows as that text in the
// first test that reads it.
//
// After a handler has detached (Detach, wait.After, Topic.OnNext), its request's values are
// gone: in the continuation, the accessors return empty values, so copy (into the strings
// they return) what the continuation needs before the handler returns. The response side —
// status, header fields, body — stays the continuation's to finish.
type Ctx struct{ x serve.Ctx }

// ReadBody reads request body bytes into p, as an io.Reader does: it returns what has arrived,
// parking the handler until some does, and io.EOF after the last byte (and the trailers of a
// chunked body). When nothing is buffered it reads the socket straight into p. Package body
// builds on it: body.Reader is the io.Reader, body.ReadAll reads a whole body under a limit.
//
// A client that sent Expect: 100-continue gets its 100 Continue on the first ReadBody, so a
// handler that refuses the request without reading never makes it send the body.
//
// Errors are sticky: ErrBodyTooLarge past Options.MaxBodyBytes or Seam.LimitBody (at once,
// before any byte, for a declared length over it), a malformed chunked body,
// io.ErrUnexpectedEOF when the client stops mid-body, ErrTimeout after Options.BodyTimeout
// without progress, ErrDeadline once the request's deadline has passed, ErrClosed or
// ErrShutdown. ReadBody may park only in the handler itself: from a continuation it returns
// ErrOutsideRequest when it would have to wait, which is not sticky.
func (cx *Ctx) ReadBody(p []byte) (int, error) {
	return cx.x.ReadBody(p)
}

// BodyErr returns the sticky error of the request body, if reading it failed.
func (cx *Ctx) BodyErr() error {
	return cx.x.BodyErr()
}

// Trailer returns the value of the first trailer field named name (case-insensitive) of a
// chunked request body, or "". Trailers are known once the body has been read to io.EOF.
func (cx *Ctx) Trailer(name string) string {
	return cx.x.Trailer(name)
}

// Trailers iterates over the trailer fields of a chunked request body in the order received,
// once the body has been read to io.EOF.
func (cx *Ctx) Trailers() iter.Seq2[string, string] {
	return cx.x.Trailers()
}

// Context returns a context cancelled when the client goes away, when a shutdown's grace period
// ends, or when the request ends (the handler returns, or its continuation finishes). Its Err is
// then context.Canceled (context.DeadlineExceeded for the request's deadline, see SetTimeout).
// Its Value returns the request's values (SetValue). It may be handed to other goroutines, and
// stays valid (cancelled) after the request.
func (cx *Ctx) Context() context.Context {
	return cx.x.Context()
}

// Bytes returns the zero-copy view of the request (see RequestBytes): c.Bytes().Path() is the
// path without the copy Path makes. It checks nothing itself, and costs nothing: each of the
// view's methods checks its caller.
func (cx *Ctx) Bytes() RequestBytes {
	return alias.As[RequestBytes](cx.x.Bytes())
}

// Refuse answers the request with status in the server's refusal format, when the application
// gave one (Options.WriteRefusal), and reports whether it did: the answer then has the body and
// header fields WriteRefusal writes for a Refusal of status, err and this Ctx, so that what a
// handler or middleware refuses — a router's 404 and 405, a request without a session — reads
// like what the server refuses itself (a JSON API's 404 in JSON, as its 413). err says what was
// wrong, in words fit for the client (middleware.RefusalMessage shows its text, without
// "dwell: "). Without a WriteRefusal, once the response has started, when the request can no
// longer be answered, or when WriteRefusal panics (which is logged), Refuse writes nothing and
// reports false: the caller then answers its own way, as it did before.
//
// What the handler prepared gives way, as it does to the server's own answers: the body held so
// far, a body filter (Seam.WrapBody), and the header fields that describe the content
// (Content-Type, Content-Encoding, caching); the other fields set so far stay (Allow, a request
// id, CORS, WWW-Authenticate). Unlike the server's own refusals, the response keeps the
// connection open, as any handler's response does. Write nothing after it. status is a 4xx or
// 5xx; anything else panics, since it is a programming error.
func (cx *Ctx) Refuse(status int, err error) bool {
	return cx.x.Refuse(status, err)
}

// Method returns the request method, such as "GET". The standard methods are returned as
// constants, without an allocation.
func (cx *Ctx) Method() string {
	return cx.x.Method()
}

// Target returns the request-target exactly as received, such as "/a%20b?x=1".
func (cx *Ctx) Target() string {
	return cx.x.Target()
}

// Path returns the target's path, percent-decoded ("/a b"); "*" for "OPTIONS *"; "/" for an
// absolute-form target without a path.
func (cx *Ctx) Path() string {
	return cx.x.Path()
}

// RawQuery returns the target's query without the "?", undecoded.
func (cx *Ctx) RawQuery() string {
	return cx.x.RawQuery()
}

// Query returns the first value of the query parameter name, decoded ('+' is a space), or ""
// when absent. The Bytes view reads it without the copy, and also says whether it is there
// (RequestBytes.Query) or reads every value (RequestBytes.QueryValues).
func (cx *Ctx) Query(name string) string {
	return cx.x.Query(name)
}

// Proto returns "HTTP/2.0" for a request on an HTTP/2 stream, else "HTTP/1.1" or "HTTP/1.0".
// Requests with a higher 1.x minor version are served as 1.1 and report "HTTP/1.1".
func (cx *Ctx) Proto() string {
	return cx.x.Proto()
}

// Host returns the authority the request is for: the absolute-form target's, else the Host
// header.
func (cx *Ctx) Host() string {
	return cx.x.Host()
}

// Header returns the value of the first header field named name (case-insensitive), or "". The
// Bytes view reads it without the copy, and also says whether the field is there
// (RequestBytes.Header) or reads every field of the name (RequestBytes.HeaderValues).
func (cx *Ctx) Header(name string) string {
	return cx.x.Header(name)
}

// Headers iterates over the request's header fields in the order received, with names as
// sent and values trimmed of surrounding whitespace.
func (cx *Ctx) Headers() iter.Seq2[string, string] {
	return cx.x.Headers()
}

// ContentLength returns the request's declared Content-Length, or -1 when it has none (no body,
// or a chunked one).
func (cx *Ctx) ContentLength() int64 {
	return cx.x.ContentLength()
}

// RemoteAddr returns the client's address (the zero value once the connection is closed).
func (cx *Ctx) RemoteAddr() netip.AddrPort {
	return cx.x.RemoteAddr()
}

// Route returns the pattern of the route that matched the request, as it was registered with
// the router ("/todos/:id", not the path), or "" when no route matched (the router's own
// redirects, 404, 405 and OPTIONS replies) or no router served it — as OpenTelemetry's
// http.route, which is left unset for a request no route matched. It is what traces and logs
// label a request by: a handful of values where paths would be without bound. Seam.RouteLabel
// also tells the router's own answers apart.
func (cx *Ctx) Route() string {
	return cx.x.Route()
}

// Param returns the value of the route parameter name, as set by the router that matched the
// request, or "". For the route "/users/:id" and the path "/users/42", Param("id") is "42"; a
// catch-all's value starts with '/'.
func (cx *Ctx) Param(name string) string {
	return cx.x.Param(name)
}

// OnDone registers f to run once the response is complete, on the request's loop, after the
// handler (and its continuation) and after any error response of the server's own. Hooks run
// in the order registered. The request's values are gone by then (see Ctx): a hook that needs
// them captures them before. f must not block.
func (cx *Ctx) OnDone(f func(Done)) {
	cx.x.OnDone(alias.As[func(serve.Done)](f))
}

// HandOver hands the request's connection to p: from the end of the loop's turn on, its bytes
// are p's, those that came behind the request's head first, and its output is what p writes
// through the returned Conn. With the status set to 101 (and the header fields of the protocol
// switch, Upgrade among them), the 101 response goes out first, with Connection: Upgrade, no
// Content-Length and nothing else of the server's but Date; with no status set and nothing
// written, nothing is sent at all (a raw takeover, as net/http's Hijack). Any other response
// under way, or a request body not read to its end, is an error, and the connection stays
// HTTP's.
//
// The handler may return at once — the connection then lives on without a coroutine, costing
// its Conn and its state, and the request ends as usual (its completion hooks see the 101) —
// or go on, parked (Suspend, Seam.Hold) while p wakes it, or detached (Detach, and the waits made
// of it, such as wait.Topic's OnNext), until it returns: the connection's close wakes it with
// ErrClosed, the end of a shutdown's grace period with ErrShutdown, and its completion hooks
// run when it ends. Either way the connection is p's until it closes; the request's response
// can no longer be written.
//
// On an HTTP/2 stream opened by an extended CONNECT (RFC 8441; see Seam.ConnectProtocol), what is
// handed over is the stream: with no status set, or a 2xx one (not 101), the response's HEADERS
// go out without ending the stream, and from then on the stream's DATA is p's input and what p
// writes leaves as DATA, within the stream's flow-control windows; Close ends the stream
// (END_STREAM), Abort resets it, the client's END_STREAM is the end of its input. The request
// body not read yet is not in the way: it is the start of p's input. A 2xx, which tells the
// client that its tunnel is open, is HandOver's alone: any other 2xx a handler gives an extended
// CONNECT (a GET route's page, say) goes out as the server's 501 Not Implemented
// (ErrTunnelRefused), and its other statuses (400, 403, 404, 426) as they are.
func (cx *Ctx) HandOver(p Protocol) (*Conn, error) {
	r0, r1 := cx.x.HandOver(p)
	return alias.As[*Conn](r0), r1
}

// HandOverConn hands the request's connection over, as HandOver does (the same 101, or nothing
// for a raw takeover), to goroutines: it returns a net.Conn any goroutine may read and write,
// whose bytes the connection's loop carries — those that came behind the request's head first.
// Read returns io.EOF once the client has closed its side or a shutdown has begun, and what it
// sent has been read; Write copies its bytes and returns, waiting first while the connection's
// output is past its high-water mark (Options.WriteHighWater); Close closes the connection once
// what was written before has gone out. What the client sends is held up to 64 KiB before the
// loop stops reading it, until the goroutines have read half. The connection closes once the
// net.Conn is collected unclosed, as net/http's hijacked ones do. This is net/http's Hijack
// (the bridge's is built on it), for code that wants a goroutine and a net.Conn rather than a
// Protocol.
func (cx *Ctx) HandOverConn() (net.Conn, error) {
	return cx.x.HandOverConn()
}

// SetHeader sets a response header field, replacing any of the same name. Date and Content-Type set
// here replace the server's; Content-Length declares the body's length (the body then streams
// without buffering); Connection: close ends the connection after the response, for good (no
// later field takes it back: the server may have decided so too); Transfer-Encoding and other
// Connection values are the server's to set and are ignored. An empty Content-Type sends none,
// where the server would send text/plain. An invalid name, a value with CR, LF or another
// control byte (which would let a client value split the response), or a Content-Length that is
// not a length or is less than the body already written, is a programming error and panics. It
// has no effect once the response has started.
func (cx *Ctx) SetHeader(name, value string) {
	cx.x.SetHeader(name, value)
}

// AddHeader adds a response header field, keeping any of the same name (as for Set-Cookie). See
// SetHeader for the special fields and validation.
func (cx *Ctx) AddHeader(name, value string) {
	cx.x.AddHeader(name, value)
}

// DelHeader removes the response header fields named name (but Connection: close, see
// SetHeader). It has no effect once the response has started.
func (cx *Ctx) DelHeader(name string) {
	cx.x.DelHeader(name)
}

// ResponseHeader returns the value of the first response field named name set so far, or "";
// for Connection, "close" once the response asks for the close (SetHeader, or the server's own
// answers; a client's Connection: close is the request's, read with Header).
func (cx *Ctx) ResponseHeader(name string) string {
	return cx.x.ResponseHeader(name)
}

// Suspend parks the handler until a Waker wakes it, and returns the error passed there; after
// timeout (if > 0; 0 is none) it returns ErrTimeout. It returns early with ErrClosed when the
// client goes away, with ErrShutdown when a shutdown's grace period ends (or, after
// Seam.WakeOnShutdown, as soon as a shutdown begins), and with ErrDeadline when the request's
// own deadline (SetTimeout) passes; once the client has gone, Suspend returns that at once.
// (Seam.Hold is the park none of these end, for work that must run to its end.) It must be
// called from the handler itself: elsewhere (a continuation, a callback, another goroutine) it
// returns ErrOutsideRequest.
func (cx *Ctx) Suspend(timeout time.Duration) error {
	return cx.x.Suspend(timeout)
}

// Waker returns a Waker for the handler's next (or current) Suspend, Seam.Hold or Detach.
func (cx *Ctx) Waker() Waker {
	return alias.As[Waker](cx.x.Waker())
}

// Detach lets the handler return without finishing its response: the response stays open and
// k runs later, on the loop, with c, when a Waker wakes it (with its error), after
// timeout (if > 0) with ErrTimeout, when the client goes away (ErrClosed), when a shutdown's
// grace period ends (ErrShutdown; or as soon as one begins, after Seam.WakeOnShutdown) or when the
// request's deadline passes (ErrDeadline). k writes the rest of the response; when it returns,
// the response is finished, unless k called Detach again. This is the continuation style: a
// parked request costs its connection and its Ctx, not a coroutine — and since k receives c,
// it can be a plain function rather than a closure.
//
// Call Detach from the handler just before it returns, or from k to wait again. k cannot park:
// its writes past the high-water mark queue up, and it cannot read the body. The request's
// values are gone in k (see Ctx); copy what it needs before the handler returns.
func (cx *Ctx) Detach(timeout time.Duration, k func(c *Ctx, err error)) {
	cx.x.Detach(timeout, alias.As[func(c *serve.Ctx, err error)](k))
}

// SetTimeout gives the request a deadline d from now (d <= 0 removes it). When it passes
// before the response is complete, the request ends as if its time were up: its Context is
// cancelled (with context.DeadlineExceeded), its waits end with ErrDeadline (Seam.Hold's only once
// it is resumed) and its writes fail with ErrDeadline; if no response had started, the server
// answers 503 when the handler returns, and if one had, the connection closes to cut it.
func (cx *Ctx) SetTimeout(d time.Duration) {
	cx.x.SetTimeout(d)
}

// SetStatus sets the response status code, 200 by default. It has no effect once the response
// has started (after Flush, or once written bytes passed the high-water mark). A code outside
// 100–999 is a programming error and panics, as in net/http.
//
// An informational status (1xx other than 101) is not the response's status: it is sent at
// once as an interim response, with the header fields set so far (103 Early Hints with its
// Link fields, say), and the final status stays 200 unless set again. HTTP/1.0 clients get no
// interim response (RFC 9110 §15.2).
func (cx *Ctx) SetStatus(code int) {
	cx.x.SetStatus(code)
}

// ResponseStatus returns the response's status set so far (200 when none was).
func (cx *Ctx) ResponseStatus() int {
	return cx.x.ResponseStatus()
}

// ResponseStarted reports whether the response head has been committed: after that, the status
// and header fields can no longer change.
func (cx *Ctx) ResponseStarted() bool {
	return cx.x.ResponseStarted()
}

// WriteString is Write for a string, without a copy.
func (cx *Ctx) WriteString(s string) (int, error) {
	return cx.x.WriteString(s)
}

// Write appends p to the response body. The body is held until the handler returns, so that it
// goes out with a Content-Length; once it passes WriteHighWater (or after Flush, or when the
// handler declared a Content-Length) the head is sent and the body streams — chunked for
// HTTP/1.1 without a declared length. While more than WriteHighWater bytes wait for a slow
// client the handler parks, and resumes when the client has taken half. A client that is gone
// makes Write return ErrClosed at once.
//
// With a body filter installed (Seam.WrapBody), p goes through it first.
//
// In a continuation (after Detach) Write cannot park: past the high-water mark bytes are
// queued, so a continuation that writes a lot should write in steps (wait.After).
func (cx *Ctx) Write(p []byte) (int, error) {
	return cx.x.Write(p)
}

// Flush sends the response head, if it has not gone yet, and everything written so far, without
// waiting for the client to take it. After Flush the body streams (see Write). With a body
// filter installed (Seam.WrapBody), the filter's Flush runs first.
func (cx *Ctx) Flush() error {
	return cx.x.Flush()
}

// Seam returns the request's plumbing for packages built on core (see Seam). It checks
// nothing itself, and costs nothing: each of the Seam's methods checks its caller.
func (cx *Ctx) Seam() Seam {
	return alias.As[Seam](cx.x.Seam())
}

// Params returns the request's route parameters, name and value, in the order the router set
// them. Each value is a copy, the caller's to keep; Param reads one by its name.
func (cx *Ctx) Params() iter.Seq2[string, string] {
	return cx.x.Params()
}

// SendFile sends n bytes of f, from offset off, as the next part of the response body, with
// sendfile(2): the bytes go from the page cache to the socket without being copied through the
// process. Up to 16 KiB are read into the response instead, to leave with the head in one
// write. The head is committed first if it has not been (set Content-Length beforehand to
// avoid chunked framing). f only needs to stay open until SendFile returns: the handler parks
// until the file's bytes are written or copied, and if SendFile returns early (the client
// left, a shutdown ended the wait) the connection is closed with whatever of the file was not
// sent, since the body can no longer be completed. A file that turns out shorter than n
// (truncated meanwhile) ends the connection with an error. With a body filter installed
// (Seam.WrapBody) the file's bytes are read and written through the filter, unless it is
// Transparent. SendFile cannot be used from a continuation (ErrOutsideRequest).
func (cx *Ctx) SendFile(f *os.File, off, n int64) error {
	return cx.x.SendFile(f, off, n)
}

// TLS returns the TLS state of the request's connection — version, cipher suite, the server
// name the client asked for (SNI), the protocol negotiated (ALPN), the client's certificates
// under mutual TLS, whether the session was resumed — or nil over plaintext. Each call
// returns a new copy.
func (cx *Ctx) TLS() *tls.ConnectionState {
	return cx.x.TLS()
}

// Scheme returns the scheme the request came by: "https" over TLS, else "http". (A request
// through a proxy that ended TLS came by "http"; the proxy's own fields say how the client
// reached it.)
func (cx *Ctx) Scheme() string {
	return cx.x.Scheme()
}

// SetTrailer sets a trailer field of the response, replacing any of the same name. It may be
// called until the handler (or its continuation) returns, before or after the head went out.
// A response that has trailers when its head goes out streams: over HTTP/1.1 its body is
// chunked (an HTTP/1.0 client, which chunked coding cannot reach, gets no trailers), so that
// the trailers can follow it; over HTTP/2 they end the stream whatever the body. Over HTTP/1.1
// a declared Content-Length frames the body instead, as in net/http, and the trailers are
// dropped, whenever they were set: the length leaves them nowhere to go. The framing fields (Content-Length, Transfer-Encoding, Host, Trailer, Connection)
// cannot be trailers and are ignored; an invalid name or value panics, as in SetHeader.
func (cx *Ctx) SetTrailer(name, value string) {
	cx.x.SetTrailer(name, value)
}

// SetValue attaches val to the request under key, as context.WithValue would: c.Value(key) and
// c.Context().Value(key) return it until the request ends. A later SetValue with an equal key
// shadows the earlier one. Keys follow context's rules: comparable, and of a type of the
// setter's own so that packages do not collide. It is the way for a middleware to hand
// something to the handler (the authenticated user, a request id). The first four values set
// before the request asks for its Context are kept in the Ctx and cost no allocation (a
// Context asked for later pays a small allocation for each); any other costs one.
func (cx *Ctx) SetValue(key, val any) {
	cx.x.SetValue(key, val)
}

// Value returns the value SetValue attached to the request under key, or nil.
func (cx *Ctx) Value(key any) any {
	return cx.x.Value(key)
}
