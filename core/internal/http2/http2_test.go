package http2

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dwellhttp/dwell/core/internal/h2"
	"github.com/dwellhttp/dwell/core/internal/serve"
	"github.com/dwellhttp/dwell/core/internal/wire"
	"github.com/dwellhttp/dwell/internal/testclient"
)

// h2Handler serves the HTTP/2 tests: the same handler an HTTP/1.1 request would get.
func h2Handler(woken chan<- serve.Waker, done chan<- serve.Done) serve.Handler {
	return func(c *serve.Ctx) {
		if done != nil {
			c.OnDone(func(d serve.Done) { done <- d })
		}
		switch c.Path() {
		case "/hello":
			c.SetHeader("X-Proto", c.Proto())
			c.SetHeader("X-Host", c.Host())
			c.SetHeader("Connection", "close") // not HTTP/2's: dropped
			c.WriteString("hello")
		case "/echo":
			b, err := io.ReadAll(bodyReader{c})
			if err != nil {
				c.SetStatus(400)
				c.WriteString(err.Error())
				return
			}
			c.SetHeader("X-Len", strconv.Itoa(len(b)))
			c.Write(b)
		case "/big":
			n, _ := strconv.Atoi(c.Query("n"))
			chunk := []byte(strings.Repeat("x", 1000))
			for ; n > 0; n -= len(chunk) {
				if _, err := c.Write(chunk[:min(n, len(chunk))]); err != nil {
					return
				}
			}
		case "/park":
			woken <- c.Waker()
			if err := c.Suspend(0); err != nil {
				return
			}
			c.WriteString("woken")
		case "/part": // a response begun, then a wait, whose end the response tells
			c.WriteString("part")
			c.Flush()
			woken <- c.Waker()
			if err := c.Suspend(0); err != nil {
				c.WriteString(", then " + err.Error())
				return
			}
			c.WriteString(", then the rest")
		case "/hold": // as wait.Do does: only the Waker ends the wait, whatever the client does
			woken <- c.Waker()
			c.Seam().Hold()
		case "/trailers":
			c.SetTrailer("Grpc-Status", "0")
			c.WriteString("x")
			c.SetTrailer("Grpc-Message", "fine")
		case "/interim":
			c.SetHeader("Link", "</a.css>; rel=preload")
			c.SetStatus(103)
			c.WriteString("final")
		default:
			c.SetStatus(404)
		}
	}
}

type bodyReader struct{ c *serve.Ctx }

func (r bodyReader) Read(p []byte) (int, error) { return r.c.ReadBody(p) }

func TestH2Hello(t *testing.T) {
	_, addr := startServer(t, h2Handler(nil, nil), serve.Options{})
	c := dialH2(t, addr)
	c.request(1, true, ":method", "GET", ":scheme", "http", ":authority", "example.test", ":path", "/hello")
	r := c.response(1)
	if r.status != 200 || string(r.body) != "hello" {
		t.Fatalf("status %d body %q", r.status, r.body)
	}
	want := map[string]string{"x-proto": "HTTP/2.0", "x-host": "example.test", "content-length": "5",
		"content-type": "text/plain; charset=utf-8"}
	for k, v := range want {
		if r.fields[k] != v {
			t.Errorf("%s: %q, want %q", k, r.fields[k], v)
		}
	}
	if _, ok := r.fields["connection"]; ok {
		t.Error("a Connection field went out over HTTP/2")
	}
	if r.fields["date"] == "" {
		t.Error("no date")
	}
	// The connection goes on: a second request, then HEAD.
	c.get(3, "/nothing")
	if r := c.response(3); r.status != 404 {
		t.Errorf("stream 3: %d", r.status)
	}
	c.request(5, true, ":method", "HEAD", ":scheme", "http", ":authority", "h", ":path", "/hello")
	if r := c.response(5); r.status != 200 || len(r.body) != 0 || r.fields["content-length"] != "5" {
		t.Errorf("HEAD: %d %q %q", r.status, r.body, r.fields["content-length"])
	}
	// A HEAD whose handler writes nothing gives no length, which would have to be GET's.
	c.request(7, true, ":method", "HEAD", ":scheme", "http", ":authority", "h", ":path", "/nothing")
	if r := c.response(7); r.status != 404 || len(r.body) != 0 || r.fields["content-length"] != "" {
		t.Errorf("HEAD of nothing: %d %q %q", r.status, r.body, r.fields["content-length"])
	}
}

// TestH2StreamsAreConcurrent: a parked stream holds up no other, and a request body arrives
// as the handler reads it.
func TestH2StreamsAreConcurrent(t *testing.T) {
	woken := make(chan serve.Waker, 1)
	s, addr := startServer(t, h2Handler(woken, nil), serve.Options{})
	c := dialH2(t, addr)
	c.get(1, "/park")
	w := receive(t, "the parked handler's Waker", woken)
	c.request(3, false, ":method", "POST", ":scheme", "http", ":authority", "h", ":path", "/echo")
	c.data(3, false, []byte("abc"))
	c.get(5, "/hello")
	if r := c.response(5); r.status != 200 {
		t.Fatalf("stream 5 behind a parked stream and a body under way: %d", r.status)
	}
	c.data(3, true, []byte("def"))
	if r := c.response(3); string(r.body) != "abcdef" || r.fields["x-len"] != "6" {
		t.Fatalf("echo: %q %v", r.body, r.fields)
	}
	if st := s.Stats().Total.Conns; st.HTTP2 != 1 || st.Streams != 1 || st.ParkedStreams != 1 || st.HandedOver != 0 {
		t.Errorf("stats: %d HTTP/2 connections, %d streams, %d parked, %d handed over", st.HTTP2, st.Streams, st.ParkedStreams, st.HandedOver)
	}
	w.Wake(nil)
	if r := c.response(1); string(r.body) != "woken" {
		t.Fatalf("parked stream: %q", r.body)
	}
}

// TestH2FlowControl: a client that grants no window holds its stream's handler, not the
// connection's other streams, and gets every byte once it opens the window.
func TestH2FlowControl(t *testing.T) {
	_, addr := startServer(t, h2Handler(nil, nil), serve.Options{})
	c := dialH2(t, addr, h2.Setting{ID: h2.SettingInitialWindowSize, Value: 0})
	c.until("the settings acknowledged", func() bool { return c.acks > 0 })
	c.get(1, "/big?n=100000")
	c.until("the head of stream 1", func() bool { return c.streams[1] != nil && c.streams[1].status != 0 })
	c.get(3, "/hello")
	c.write(h2.AppendWindowUpdate(nil, 3, 100))
	if r := c.response(3); string(r.body) != "hello" {
		t.Fatalf("stream 3 beside a stream at a zero window: %q", r.body)
	}
	if n := len(c.streams[1].body); n != 0 {
		t.Fatalf("%d bytes sent on a zero window", n)
	}
	c.write(h2.AppendWindowUpdate(nil, 0, 1<<20))
	c.write(h2.AppendWindowUpdate(nil, 1, 1<<20))
	if r := c.response(1); len(r.body) != 100000 || r.rst {
		t.Fatalf("stream 1: %d bytes, reset %v", len(r.body), r.rst)
	}
}

// TestH2ZeroWindowReset: a stream that sits at a zero window past the write timeout is reset,
// and its handler sees the timeout; the connection and its other streams go on.
func TestH2ZeroWindowReset(t *testing.T) {
	done := make(chan serve.Done, 4)
	_, addr := startServer(t, h2Handler(nil, done), serve.Options{WriteTimeout: 50 * time.Millisecond})
	c := dialH2(t, addr, h2.Setting{ID: h2.SettingInitialWindowSize, Value: 0})
	c.get(1, "/big?n=400000") // past the high-water mark: the handler parks in Write
	r := c.response(1)
	if !r.rst || r.code != h2.Cancel {
		t.Fatalf("stream 1: reset %v code %v", r.rst, r.code)
	}
	if d := receive(t, "stream 1's end", done); !errors.Is(d.Err, serve.ErrTimeout) {
		t.Errorf("Done.Err %v, want ErrTimeout", d.Err)
	}
	c.get(3, "/hello")
	c.write(h2.AppendWindowUpdate(nil, 3, 100))
	if r := c.response(3); string(r.body) != "hello" {
		t.Fatalf("after the reset: %q", r.body)
	}
}

// TestH2Trailers: trailers end the stream, after the body, in a HEADERS frame of their own.
func TestH2Trailers(t *testing.T) {
	_, addr := startServer(t, h2Handler(nil, nil), serve.Options{})
	c := dialH2(t, addr)
	c.get(1, "/trailers")
	r := c.response(1)
	if string(r.body) != "x" || r.fields["grpc-status"] != "0" || r.fields["grpc-message"] != "fine" {
		t.Fatalf("body %q, fields %v", r.body, r.fields)
	}
}

func TestH2Interim(t *testing.T) {
	_, addr := startServer(t, h2Handler(nil, nil), serve.Options{})
	c := dialH2(t, addr)
	c.get(1, "/interim")
	r := c.response(1)
	if len(r.interims) != 1 || r.interims[0] != 103 || r.status != 200 || string(r.body) != "final" {
		t.Fatalf("interims %v, status %d, body %q", r.interims, r.status, r.body)
	}
}

// TestH2IdleTimeout: a connection with no stream for IdleTimeout says GOAWAY (NO_ERROR) and
// closes.
func TestH2IdleTimeout(t *testing.T) {
	_, addr := startServer(t, h2Handler(nil, nil), serve.Options{IdleTimeout: 20 * time.Millisecond})
	c := dialH2(t, addr)
	c.get(1, "/hello")
	c.response(1)
	if code := c.connError(); code != h2.NoError || c.goAway.last != 1 {
		t.Fatalf("GOAWAY %v, last stream %d", code, c.goAway.last)
	}
}

func TestH2Ping(t *testing.T) {
	_, addr := startServer(t, h2Handler(nil, nil), serve.Options{})
	c := dialH2(t, addr)
	c.write(h2.AppendPing(nil, false, [8]byte{1, 2, 3, 4, 5, 6, 7, 8}))
	c.until("the PING's answer", func() bool { return len(c.pings) > 0 })
	if c.pings[0] != [8]byte{1, 2, 3, 4, 5, 6, 7, 8} {
		t.Fatalf("PING answered with %v", c.pings[0])
	}
}

// TestH2Shutdown: a shutdown sends GOAWAY (NO_ERROR), lets the streams under way finish, and
// closes the connection after the last.
func TestH2Shutdown(t *testing.T) {
	woken := make(chan serve.Waker, 1)
	s, addr := startServer(t, h2Handler(woken, nil), serve.Options{})
	c := dialH2(t, addr)
	c.get(1, "/park")
	w := receive(t, "the parked handler's Waker", woken)
	go s.Shutdown(t.Context())
	c.until("GOAWAY", func() bool { return c.goAway != nil })
	if c.goAway.code != h2.NoError || c.goAway.last != 1 {
		t.Fatalf("GOAWAY %+v", *c.goAway)
	}
	w.Wake(nil)
	if r := c.response(1); string(r.body) != "woken" {
		t.Fatalf("the stream under way: %q", r.body)
	}
	for {
		if _, _, ok := c.frame(); !ok {
			break
		}
	}
}

// TestH2ShutdownGraceEnds: when the grace period ends, the handlers still waiting are woken with
// ErrShutdown, as on HTTP/1.1, and their answers go out before the connection closes: a 503 for
// one that had written nothing, the rest of its response for one that had begun it.
func TestH2ShutdownGraceEnds(t *testing.T) {
	woken := make(chan serve.Waker, 2)
	done := make(chan serve.Done, 2)
	s, addr := startServer(t, h2Handler(woken, done), serve.Options{})
	c := dialH2(t, addr)
	c.get(1, "/park")
	receive(t, "the parked handler's Waker", woken)
	c.get(3, "/part")
	receive(t, "the second handler's Waker", woken)
	c.until("the first part", func() bool { s := c.streams[3]; return s != nil && len(s.body) > 0 })
	ctx, cancel := context.WithCancel(t.Context())
	cancel() // no grace at all
	if err := s.Shutdown(ctx); err != context.Canceled {
		t.Fatalf("Shutdown: %v", err)
	}
	if r := c.response(1); r.rst || r.status != 503 {
		t.Fatalf("the stream that had no answer: reset %v (code %v), status %d; want a 503", r.rst, r.code, r.status)
	}
	if r, want := c.response(3), "part, then "+serve.ErrShutdown.Error(); r.rst || string(r.body) != want {
		t.Fatalf("the stream with a response begun: reset %v, body %q; want %q", r.rst, r.body, want)
	}
	for range 2 {
		if d := receive(t, "a handler's end", done); !errors.Is(d.Err, serve.ErrShutdown) {
			t.Errorf("Done.Err %v, want ErrShutdown", d.Err)
		}
	}
	c.until("GOAWAY", func() bool { return c.goAway != nil })
	for {
		if _, _, ok := c.frame(); !ok {
			break // the connection closed after its streams
		}
	}
}

// TestH2ShutdownRefusesFirst: a client that has a shutdown's GOAWAY and connects again at once
// is refused: every loop stops accepting before any connection is told (with two loops, the
// one that sends the GOAWAY may not be the one whose listening socket the new connection
// finds).
func TestH2ShutdownRefusesFirst(t *testing.T) {
	s, addr := startServer(t, helloHandler, serve.Options{Loops: 2})
	conns := make([]*h2client, 16) // on both loops: SO_REUSEPORT spreads them
	for i := range conns {
		conns[i] = dialH2(t, addr)
		conns[i].get(1, "/")
		conns[i].response(1)
	}
	go s.Shutdown(t.Context())
	for i, c := range conns {
		c.until("GOAWAY", func() bool { return c.goAway != nil })
		if nc, err := net.Dial("tcp", addr); err == nil {
			nc.Close()
			t.Fatalf("connection %d had GOAWAY, and a new one was still taken", i)
		}
	}
}

// TestH2Disabled: with HTTP/2 off the preface is the HTTP/1.1 request it is not.
func TestH2Disabled(t *testing.T) {
	for _, o := range []serve.Options{{DisableHTTP2: true}, {DisableH2C: true}} {
		_, addr := startServer(t, helloHandler, o)
		c := dial(t, addr)
		c.Send(h2.ClientPreface)
		if resp, _ := c.Response("PRI"); resp.StatusCode != 505 {
			t.Errorf("%+v: %d", o, resp.StatusCode)
		}
	}
}

// TestH2PrefaceOnlyFirst: HTTP/2's preface, and a damaged one, can only begin a connection
// (RFC 9113 §3.4). After a request, on a port that speaks h2c, the preface is the HTTP/1.1
// request it is not (505), and a line that names no HTTP/1.x version gets its 400.
func TestH2PrefaceOnlyFirst(t *testing.T) {
	_, addr := startServer(t, helloHandler, serve.Options{})
	served := func() *rawConn { // a connection that has served a request
		c := dial(t, addr)
		c.Send("GET / HTTP/1.1\r\nHost: h\r\n\r\n")
		if resp, _ := c.Response("GET"); resp.StatusCode != 200 {
			t.Fatalf("the first request: %d", resp.StatusCode)
		}
		return c
	}
	c := served()
	c.Send(h2.ClientPreface)
	if resp, _ := c.Response("PRI"); resp.StatusCode != 505 {
		t.Errorf("the preface after a request: %d", resp.StatusCode)
	}
	c = served()
	testclient.Expect400(t, c.TCPConn, c.R, testclient.NotHTTP1Lines[0].Raw, wire.ErrNotHTTP.Reason)
}

// TestH2InvalidPreface: on a port that speaks h2c, a first line naming no HTTP version may be
// a damaged preface, so the connection closes without an HTTP/1.1 answer (RFC 9113 §3.4); with
// h2c off, or for a line that is HTTP/1.x however malformed, the answer is the usual 400.
func TestH2InvalidPreface(t *testing.T) {
	const line = "INVALID CONNECTION PREFACE\r\n\r\n"
	_, addr := startServer(t, helloHandler, serve.Options{})
	c := dial(t, addr)
	c.Send(line)
	c.ExpectEOF()

	c = dial(t, addr)
	c.Send("GET / http/1.1\r\nHost: x\r\n\r\n")
	if resp, _ := c.Response("GET"); resp.StatusCode != 400 {
		t.Errorf("lower-case version: %d", resp.StatusCode)
	}

	// A line that names HTTP/1.x is no preface, however malformed: its client reads the 400.
	c = dial(t, addr)
	c.Send("GET /  HTTP/1.1\r\nHost: x\r\n\r\n")
	if resp, _ := c.Response("GET"); resp.StatusCode != 400 {
		t.Errorf("second space before the version: %d", resp.StatusCode)
	}

	// Any line that names no HTTP/1.x version may be a damaged preface: closed unanswered on
	// the h2c port, answered with its 400 where h2c is off.
	_, plain := startServer(t, helloHandler, serve.Options{DisableH2C: true})
	for _, tt := range testclient.NotHTTP1Lines {
		c := dial(t, addr)
		testclient.ExpectSilentClose(t, c.TCPConn, c.R, tt.Raw)
		c = dial(t, plain)
		testclient.Expect400(t, c.TCPConn, c.R, tt.Raw, wire.ErrNotHTTP.Reason)
	}
}

// TestH2ResponseFields: the handler's fields go from the response's field set to HPACK: names
// in lower case, the whitespace around a value dropped (RFC 9113 §8.2.1; a trailer's too), the
// connection-specific fields left out (§8.2.2), a field set, deleted and added again sent once,
// repeated fields each sent, and a long value whole.
func TestH2ResponseFields(t *testing.T) {
	long := strings.Repeat("v", 300)
	_, addr := startServer(t, func(c *serve.Ctx) {
		c.SetHeader("X-Spaced", "  padded value\t ")
		c.SetHeader("Keep-Alive", "timeout=5")
		c.SetHeader("Upgrade", "websocket")
		c.SetHeader("X-Gone", "1")
		c.DelHeader("x-gone")
		c.AddHeader("X-Gone", "2")
		c.AddHeader("X-Twice", "a")
		c.AddHeader("X-Twice", "b")
		c.SetHeader("X-Long", long)
		c.SetTrailer("X-Trail", " padded too ")
		c.WriteString("ok")
	}, serve.Options{})
	c := dialH2(t, addr)
	c.get(1, "/")
	r := c.response(1)
	if r.status != 200 || string(r.body) != "ok" {
		t.Fatalf("status %d body %q", r.status, r.body)
	}
	want := map[string]string{"x-spaced": "padded value", "x-gone": "2", "x-long": long, "x-trail": "padded too"}
	for k, v := range want {
		if r.fields[k] != v {
			t.Errorf("%s: %q, want %q", k, r.fields[k], v)
		}
	}
	for _, k := range []string{"keep-alive", "upgrade"} {
		if _, ok := r.fields[k]; ok {
			t.Errorf("%s went out over HTTP/2", k)
		}
	}
	if got := r.lists["x-twice"]; strings.Join(got, ",") != "a,b" {
		t.Errorf("x-twice: %q, want both", got)
	}
}

// TestH2WholeBodies: a body held whole until its handler returns reaches the client intact
// whether it is copied behind its head (up to CopyLimit), moved into the connection's queue
// (beyond it, within a frame), or framed from the stream's queue (beyond a frame), and a
// stream after it on the connection too. (The client grants no window: a connection each.)
func TestH2WholeBodies(t *testing.T) {
	sizes := []int{1, serve.CopyLimit, serve.CopyLimit + 1, 10_000, h2.MinMaxFrameSize, h2.MinMaxFrameSize + 1, 30_000}
	body := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte('a' + i%26)
		}
		return b
	}
	_, addr := startServer(t, func(c *serve.Ctx) {
		n, _ := strconv.Atoi(c.Query("n"))
		c.Write(body(n))
	}, serve.Options{})
	for _, n := range sizes {
		c := dialH2(t, addr)
		for _, id := range []uint32{1, 3} {
			c.get(id, "/?n="+strconv.Itoa(n))
			r := c.response(id)
			if r.status != 200 || !bytes.Equal(r.body, body(n)) || r.fields["content-length"] != strconv.Itoa(n) {
				t.Errorf("%d bytes, stream %d: status %d, %d bytes back, content-length %q", n, id, r.status, len(r.body), r.fields["content-length"])
			}
		}
	}
}
