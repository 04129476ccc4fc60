package coretest

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/dwellhttp/dwell/core"
)

// In-process exchanges: a handler's test runs requests through it as net/http's tests do with
// httptest.NewRecorder — no listening socket, no network, no port — yet through dwell's own
// server: a Client's server has loops of its own, and each request goes over a connection
// that is one end of a pair of connected sockets (AF_UNIX on Linux), handed to a loop as if
// accepted, the other end the Client's. So the handler runs as it does in production — in a
// coroutine, parking on its loop, its response framed, held or streamed by the server — and
// the test reads what a client would read.
//
// Beside net/http/httptest:
//
//	httptest                                     coretest
//	r := httptest.NewRequest("GET", "/x", nil)   r := coretest.NewRequest("GET", "/x", nil)
//	w := httptest.NewRecorder()                  resp := coretest.Do(t, h, r)
//	h.ServeHTTP(w, r); resp := w.Result()
//	srv := httptest.NewServer(h)                 c := coretest.NewClient(t, h, core.Options{})
//	resp, _ := srv.Client().Do(r)                resp := c.Do(r)
//	(no equivalent)                              x := c.Start(r); x.WaitParked(); ...; x.Response()
//	w.Flushed, reading as it streams             x.Stream(): the body as the server sends it

// DefaultRemoteAddr is the client address a request's handler sees (core.Ctx.RemoteAddr) when
// the request has none in its RemoteAddr field: httptest.NewRequest's, an address of TEST-NET-1
// (RFC 5737), which no real client has.
const DefaultRemoteAddr = "192.0.2.1:1234"

// NewRequest returns a request for Do or a Client to run, made as httptest.NewRequest makes
// it: method, target — a path with its query ("/search?q=dwell") or an absolute URL, whose host
// becomes the Host — and body, nil for none. Its Host is example.com unless target names one,
// its RemoteAddr is DefaultRemoteAddr, and a *bytes.Buffer, *bytes.Reader or *strings.Reader
// body is sent with a Content-Length, any other chunked. The test may set its fields and add
// header fields before running it; the scheme of an absolute URL is ignored (the in-process
// server speaks plain HTTP). It panics when net/http cannot parse method or target.
func NewRequest(method, target string, body io.Reader) *http.Request {
	return httptest.NewRequest(method, target, body)
}

// Do runs r through h on an in-process server of its own, with default options, and returns
// the complete response, as Client.Do does; the server is shut down before Do returns. For
// several requests, server options, or a handler that waits for the test, use a Client.
func Do(t testing.TB, h core.Handler, r *http.Request) *http.Response {
	t.Helper()
	c := newClient(t, h, core.Options{})
	defer c.shutdown()
	return c.Do(r)
}

// A Client runs requests through a handler on an in-process server, for the length of a test: Do
// returns a request's complete response; Start sends one and returns an Exchange, to wait until its
// handler parks (for a long poll, a stream, a wait the test ends), to read a response as it is
// streamed, or to leave. One server serves all of a Client's requests, so many are cheap: each has
// a connection of its own (a socket pair; on Windows, a loopback TCP connection), on which it is
// sent as http.Request.Write sends it (without the User-Agent Write adds to a request that has
// none).
//
// The response is an *http.Response, read with http.ReadResponse from what the server sent, rather
// than a recorder's fields: a dwell handler writes to a connection, not to an http.ResponseWriter,
// and its response is what the server makes of its writes — framed, held or streamed, answered for
// when the handler fails. So the test gets net/http's types and what a client gets: a HEAD response
// has no body, a chunked one is decoded, a response cut short fails as it is read, the server's own
// answers (a 413, a 500 for a panic) are there as sent.
//
// A Client is for the test that made it: its methods, and its Exchanges', fail that test with
// t.Fatalf, and so are for the test's goroutine, as testing.T.FailNow requires.
type Client struct {
	t    testing.TB
	srv  *core.Server
	errc chan error // what Serve(nil) returned

	mu   sync.Mutex
	open map[*Exchange]struct{} // the exchanges not over, closed when the client shuts down
}

// NewClient starts an in-process server for h, configured by o, until the test ends: its
// loops serve the Client's connections, and none else. Unless o has one, its logger discards.
// o.Addr is ignored, o.MaxConns does not apply, and o.TLSConfig must be nil: the Client speaks
// plain HTTP (test TLS with Serve and a TLS client). When the test ends, the exchanges still
// open are closed (their handlers' waits end with core.ErrClosed) and the server is shut down;
// the test fails if a handler has not returned after Patience.
func NewClient(t testing.TB, h core.Handler, o core.Options) *Client {
	t.Helper()
	c := newClient(t, h, o)
	t.Cleanup(c.shutdown)
	return c
}

func newClient(t testing.TB, h core.Handler, o core.Options) *Client {
	t.Helper()
	if o.TLSConfig != nil {
		t.Fatal("coretest: a Client speaks plain HTTP: Options.TLSConfig must be nil")
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	c := &Client{t: t, srv: core.NewServer(h, o), errc: make(chan error, 1), open: make(map[*Exchange]struct{})}
	// Serve blocks until Shutdown, as in any program; no listener: the connections come from dial.
	go func() { c.errc <- c.srv.Serve(nil) }()
	return c
}

// Server returns the Client's server: for its Stats, or for a test of shutdown behaviour to
// call its Shutdown. The exchanges under way then end as the server ends their connections;
// a Start after it fails the test.
func (c *Client) Server() *core.Server { return c.srv }

// Do runs r and returns its complete response: Start, then Exchange.Response.
func (c *Client) Do(r *http.Request) *http.Response {
	c.t.Helper()
	return c.Start(r).Response()
}

// Start sends r on a new connection to the server and returns without waiting for a
// response. r.RemoteAddr, an "ip:port" (DefaultRemoteAddr when empty), is what the handler's
// core.Ctx.RemoteAddr returns. r's body, if any, is read as it is sent, by another goroutine.
func (c *Client) Start(r *http.Request) *Exchange {
	t := c.t
	t.Helper()
	name := r.Method + " " + r.URL.RequestURI()
	ra := r.RemoteAddr
	if ra == "" {
		ra = DefaultRemoteAddr
	}
	remote, err := netip.ParseAddrPort(ra)
	if err != nil {
		t.Fatalf("coretest: %s: RemoteAddr: %v", name, err)
	}
	conn, served, err := dial(c.srv, remote)
	if err != nil {
		t.Fatalf("coretest: %s: %v", name, err)
	}
	x := &Exchange{c: c, name: name, req: r, conn: conn, served: served, sent: make(chan error, 1)}
	x.br = bufio.NewReader(patientReader{conn})
	c.mu.Lock()
	if c.open == nil { // the test is over
		c.mu.Unlock()
		conn.Close()
		t.Fatalf("coretest: %s: Start after the test ended", name)
	}
	c.open[x] = struct{}{}
	c.mu.Unlock()
	go x.send(r)
	return x
}

// shutdown closes the exchanges still open and shuts the server down.
func (c *Client) shutdown() {
	c.t.Helper()
	c.mu.Lock()
	open := c.open
	c.open = nil
	c.mu.Unlock()
	for x := range open {
		x.conn.Close()
	}
	ctx, cancel := context.WithTimeout(context.Background(), Patience)
	defer cancel()
	if err := c.srv.Shutdown(ctx); err != nil {
		c.t.Errorf("coretest: the in-process server has not shut down after %v: a handler has not returned", Patience)
		return
	}
	if err := <-c.errc; err != core.ErrServerClosed {
		c.t.Errorf("coretest: the in-process server: %v", err)
	}
}

// An Exchange is one request a Client has started, on its own connection: WaitParked waits
// until its handler parks, Stream returns the response once its head has come, with its body
// to read as it comes, Response returns it complete, and Close leaves, as a client that goes
// away does. Stream, Response and Close may be called in any order, and again.
type Exchange struct {
	c      *Client
	name   string // method and target, for failures
	req    *http.Request
	conn   net.Conn         // the client's end of the connection
	served *core.ServedConn // the server's end, for WaitParked
	br     *bufio.Reader    // reads conn
	sent   chan error       // the request's write: its error, once done

	mu      sync.Mutex
	resp    *http.Response
	interim []*http.Response
	sendErr error // received from sent
	sendOK  bool  // sent has been received from
	over    bool  // the response is complete, or the exchange closed

	parkMu   sync.Mutex
	parkSeen bool   // WaitParked has returned
	park     uint32 // the wait it returned for (see core.ServedConn.Waiting)
}

// send writes the request, on a goroutine of its own: the server may read its body late, or
// never (a 413).
func (x *Exchange) send(r *http.Request) {
	out := r.Clone(r.Context())
	if out.Header == nil {
		out.Header = make(http.Header)
	}
	if _, ok := out.Header["User-Agent"]; !ok {
		out.Header["User-Agent"] = nil // an empty User-Agent: Write then sends none
	}
	err := out.Write(x.conn)
	x.sent <- err
	var opErr *net.OpError
	if err != nil && !errors.As(err, &opErr) {
		// The request could not be written (its body failed, say), rather than the server
		// having stopped reading it: end the connection, so that the wait for the response
		// ends with the reason.
		x.conn.Close()
	}
}

// writeErr returns the request's write error, if the write is done and failed. x.mu is held.
func (x *Exchange) writeErr() error {
	if !x.sendOK {
		select {
		case x.sendErr = <-x.sent:
			x.sendOK = true
		default:
		}
	}
	return x.sendErr
}

// WaitParked returns once the handler is parked: waiting in its coroutine — core.Ctx.Suspend or
// core.Seam.Hold, and so the waits of package wait (Sleep, Event.Wait, Topic.Next, Do) — or as a
// continuation pending after core.Ctx.Detach (wait.After, Topic.OnNext). The test can then do what
// is to wake it, knowing that the wait has begun: a Waker woken before its park is lost, and so is
// an Event fired before its Wait. Each call waits for a wait the previous call did not see, so that
// a test can wake the handler and wait for its next wait at once, without seeing the one that is
// ending (so a second call with no wake in between waits for a wait that does not come, and fails
// after Patience). A handler waiting for its request body, or for the client to take its response,
// is not parked in this sense: what it waits for is the test's own client.
//
// WaitParked asks the server's loop, again and again, from the test's goroutine (never a loop's),
// pausing between asks; a park announces itself nowhere a test could wait on. It fails the test when the handler has
// finished, or the connection has closed, before it was seen parked (it is for a wait that the test
// ends, not a short one that ends itself), or when it has not parked after Patience.
func (x *Exchange) WaitParked() {
	t := x.c.t
	t.Helper()
	x.parkMu.Lock()
	seen, last := x.parkSeen, x.park
	x.parkMu.Unlock()
	deadline := time.Now().Add(Patience)
	for pause := 50 * time.Microsecond; ; pause = min(2*pause, 10*time.Millisecond) {
		parked, wait, over := x.served.Waiting()
		switch {
		case parked && (!seen || wait != last):
			x.parkMu.Lock()
			x.parkSeen, x.park = true, wait
			x.parkMu.Unlock()
			return
		case over:
			t.Fatalf("coretest: %s: WaitParked: the exchange ended before its handler parked", x.name)
		case time.Now().After(deadline):
			t.Fatalf("coretest: %s: WaitParked: the handler has not parked after %v", x.name, Patience)
		}
		time.Sleep(pause)
	}
}

// Stream waits for the response head and returns the response with its body unread:
// resp.Body reads the body as the server sends it — an event stream, a response flushed in
// parts — each read failing with os.ErrDeadlineExceeded when nothing has come for Patience.
// Interim responses (1xx, but for 101 Switching Protocols) are skipped, and kept for Interim.
// It fails the test when no response comes: the connection closed without one, or Patience
// passed. Later calls return the same response.
func (x *Exchange) Stream() *http.Response {
	x.c.t.Helper()
	x.mu.Lock()
	defer x.mu.Unlock()
	x.readHead()
	return x.resp
}

// readHead reads the response head, unless it has been. x.mu is held.
func (x *Exchange) readHead() {
	t := x.c.t
	t.Helper()
	for x.resp == nil {
		resp, err := http.ReadResponse(x.br, x.req)
		if err != nil {
			if errors.Is(err, os.ErrDeadlineExceeded) {
				t.Fatalf("coretest: %s: no response after %v", x.name, Patience)
			}
			msg := err.Error()
			if werr := x.writeErr(); werr != nil {
				msg += "; writing the request: " + werr.Error()
			}
			t.Fatalf("coretest: %s: no response: %s", x.name, msg)
		}
		if resp.StatusCode < 200 && resp.StatusCode != http.StatusSwitchingProtocols {
			x.interim = append(x.interim, resp)
			continue
		}
		x.resp = resp
	}
}

// Response waits for the complete response and returns it, its body read to its end and held:
// resp.Body reads it (it need not be closed). A body cut short — the server closed the connection
// before its end, as it does when a handler fails a response it has begun — reads as far as it
// came, then fails with the error net/http's client sees (io.ErrUnexpectedEOF). After Stream, what
// the test has not read of the body is read. Response fails the test when no response comes (see
// Stream), or when its body stops coming for Patience. The exchange is then over: its connection is
// closed, and later calls return the same response.
func (x *Exchange) Response() *http.Response {
	t := x.c.t
	t.Helper()
	x.mu.Lock()
	defer x.mu.Unlock()
	x.readHead()
	if _, held := x.resp.Body.(*heldBody); held {
		return x.resp
	}
	b, err := io.ReadAll(x.resp.Body)
	if errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("coretest: %s: the response's body has not ended after %v", x.name, Patience)
	}
	x.resp.Body.Close()
	x.resp.Body = &heldBody{bytes.NewReader(b), err}
	x.end()
	return x.resp
}

// Interim returns the interim responses (1xx: 100 Continue, 103 Early Hints) that came before
// the response, once Stream or Response has returned.
func (x *Exchange) Interim() []*http.Response {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.interim
}

// Close closes the client's end of the connection, as a client that goes away does: the
// handler's waits end with core.ErrClosed, and its writes fail. It does nothing once the
// exchange is over.
func (x *Exchange) Close() {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.end()
}

// end closes the connection, once. x.mu is held.
func (x *Exchange) end() {
	if x.over {
		return
	}
	x.over = true
	x.conn.Close()
	c := x.c
	c.mu.Lock()
	delete(c.open, x)
	c.mu.Unlock()
}

// A heldBody is a response body read to its end, or as far as it came.
type heldBody struct {
	r   *bytes.Reader
	err error // what ended it short, or nil
}

func (b *heldBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if err == io.EOF && b.err != nil {
		err = b.err
	}
	return n, err
}

func (b *heldBody) Close() error { return nil }

// A patientReader reads a connection, each read failing after Patience without a byte, so
// that a server that never answers fails the test rather than hanging it.
type patientReader struct{ c net.Conn }

func (r patientReader) Read(p []byte) (int, error) {
	r.c.SetReadDeadline(time.Now().Add(Patience))
	return r.c.Read(p)
}
