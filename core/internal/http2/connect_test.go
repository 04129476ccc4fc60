package http2

import (
	"errors"
	"strings"
	"testing"

	"github.com/dwellhttp/dwell/core/internal/h2"
	"github.com/dwellhttp/dwell/core/internal/serve"
	"github.com/dwellhttp/dwell/core/internal/servetest"
)

// The extended CONNECT of RFC 8441: a stream handed over (HandOver) as a connection would be.

// tunnelHandler hands an extended CONNECT's stream over to p, after checking that the request
// is served as the GET it stands for; other requests get "hello". A HandOver error is answered
// 500 with its text, and sent on errc.
func tunnelHandler(p serve.Protocol, status int, errc chan<- error) serve.Handler {
	return func(c *serve.Ctx) {
		if c.Seam().ConnectProtocol() == "" {
			if c.Path() == "/tunnel" {
				_, err := c.HandOver(p)
				errc <- err
				return
			}
			c.WriteString("hello")
			return
		}
		if c.Method() != "GET" || c.Seam().ConnectProtocol() != "websocket" || c.Path() != "/tunnel" {
			c.SetStatus(400)
			c.WriteString(c.Method() + " " + c.Seam().ConnectProtocol())
			return
		}
		c.SetHeader("Sec-WebSocket-Protocol", "chat")
		if status != 0 {
			c.SetStatus(status)
		}
		if _, err := c.HandOver(p); err != nil {
			if errc != nil {
				errc <- err
			}
			c.SetStatus(500)
			c.WriteString(err.Error())
		}
	}
}

// connect opens stream id with an extended CONNECT for WebSocket, once the server's SETTINGS
// have allowed it.
func (c *h2client) connect(id uint32) {
	c.t.Helper()
	c.connectTo(id, "/tunnel")
}

// connectTo opens stream id with an extended CONNECT for WebSocket to path.
func (c *h2client) connectTo(id uint32, path string) {
	c.t.Helper()
	c.until("the server's SETTINGS", func() bool { return c.settings != nil })
	if c.settings[h2.SettingEnableConnectProtocol] != 1 {
		c.t.Fatalf("SETTINGS %v: no SETTINGS_ENABLE_CONNECT_PROTOCOL", c.settings)
	}
	c.request(id, false, ":method", "CONNECT", ":protocol", "websocket", ":scheme", "http",
		":authority", "h", ":path", path, "sec-websocket-version", "13")
}

// TestH2ExtendedConnect: the stream's DATA is the protocol's input and its output leaves as
// DATA within the windows (Drained once the client has taken it); Close ends the stream, and
// the connection serves other streams meanwhile and after.
func TestH2ExtendedConnect(t *testing.T) {
	p := servetest.NewEcho("> ")
	_, addr := startServer(t, tunnelHandler(p, 0, nil), serve.Options{})
	c := dialH2(t, addr)
	c.connect(1)
	c.until("the answer to the CONNECT", func() bool { s := c.streams[1]; return s != nil && s.status != 0 })
	r := c.streams[1]
	if r.status != 200 || r.end || r.fields["sec-websocket-protocol"] != "chat" || r.fields["content-type"] != "" {
		t.Fatalf("answer %d, end %v, fields %v", r.status, r.end, r.fields)
	}
	c.data(1, false, []byte("hi"))
	c.until("the echo", func() bool { return string(r.body) == "> hi" })
	c.get(3, "/hello") // served beside the tunnel
	if r3 := c.response(3); string(r3.body) != "hello" {
		t.Fatalf("stream 3 beside the tunnel: %q", r3.body)
	}

	// A megabyte: as much as the windows allow, then the rest once the client opens them.
	c.data(1, false, []byte("big"))
	sent := len(r.body) + len(c.streams[3].body) // of the connection's window
	c.until("the first window's worth", func() bool { return len(r.body) == h2.DefaultWindow-sent+len("> hi") })
	c.write(h2.AppendWindowUpdate(nil, 0, 1<<20))
	c.write(h2.AppendWindowUpdate(nil, 1, 1<<20))
	want := len("> hi") + 1<<20 + len("drained")
	c.until("the megabyte and Drained", func() bool { return len(r.body) == want })
	if !strings.HasSuffix(string(r.body), "drained") || r.end || r.rst {
		t.Fatalf("after the megabyte: %q…, end %v, reset %v", r.body[len(r.body)-10:], r.end, r.rst)
	}

	c.data(1, false, []byte("bye"))
	c.response(1)
	if r.rst {
		t.Fatalf("Close reset the stream (%v) instead of ending it", r.code)
	}
	if err := receive(t, "Closed", p.Done); err != nil {
		t.Fatalf("Closed(%v) after Close", err)
	}
	c.get(5, "/hello")
	if r5 := c.response(5); string(r5.body) != "hello" {
		t.Fatalf("after the tunnel: %q", r5.body)
	}
}

// TestH2ExtendedConnectClientEnds: the client's END_STREAM is the end of the protocol's input
// (Closed with ErrClosed, after what came with it), and its RST_STREAM too; the server ends its
// side of an ended stream.
func TestH2ExtendedConnectClientEnds(t *testing.T) {
	for _, reset := range []bool{false, true} {
		p := servetest.NewEcho("> ")
		_, addr := startServer(t, tunnelHandler(p, 0, nil), serve.Options{})
		c := dialH2(t, addr)
		c.connect(1)
		if reset {
			c.until("the answer", func() bool { s := c.streams[1]; return s != nil && s.status != 0 })
			c.write(h2.AppendRSTStream(nil, 1, h2.Cancel))
		} else {
			c.data(1, true, []byte("last"))
			r := c.response(1)
			if r.rst || string(r.body) != "> last" {
				t.Fatalf("END_STREAM: reset %v, body %q", r.rst, r.body)
			}
		}
		if err := receive(t, "Closed", p.Done); !errors.Is(err, serve.ErrClosed) {
			t.Fatalf("reset %v: Closed(%v)", reset, err)
		}
		c.get(3, "/hello")
		if r := c.response(3); string(r.body) != "hello" {
			t.Fatalf("reset %v: the connection after: %q", reset, r.body)
		}
	}
}

// TestH2ExtendedConnectShutdown: a shutdown tells the stream's protocol, as it tells a
// connection's, and the connection closes after the stream's end.
func TestH2ExtendedConnectShutdown(t *testing.T) {
	p := servetest.NewEcho("> ")
	s, addr := startServer(t, tunnelHandler(p, 0, nil), serve.Options{})
	c := dialH2(t, addr)
	c.connect(1)
	c.until("the answer", func() bool { s := c.streams[1]; return s != nil && s.status != 0 })
	go s.Shutdown(t.Context())
	r := c.response(1)
	if string(r.body) != "going away" || r.rst {
		t.Fatalf("the stream at the shutdown: %q, reset %v", r.body, r.rst)
	}
	receive(t, "Closed", p.Done)
	for {
		if _, _, ok := c.frame(); !ok {
			break
		}
	}
	if c.goAway == nil || c.goAway.code != h2.NoError {
		t.Fatalf("GOAWAY %+v", c.goAway)
	}
}

// TestH2ExtendedConnectRefused: HandOver hands over no other stream, nor one answered with a
// status other than 2xx; with DisableConnectProtocol nothing announces extended CONNECT, and a
// client that sends one anyway has its stream refused as malformed.
func TestH2ExtendedConnectRefused(t *testing.T) {
	errc := make(chan error, 1)
	_, addr := startServer(t, tunnelHandler(servetest.NewEcho(""), 0, errc), serve.Options{})
	c := dialH2(t, addr)
	c.get(1, "/tunnel")
	if err := receive(t, "HandOver's error", errc); !errors.Is(err, serve.ErrHandOverHTTP2) {
		t.Fatalf("HandOver of a GET's stream: %v", err)
	}

	_, addr = startServer(t, tunnelHandler(servetest.NewEcho(""), 101, errc), serve.Options{})
	c = dialH2(t, addr)
	c.connect(1)
	if err := receive(t, "HandOver's error", errc); !errors.Is(err, serve.ErrHandOverTunnel) {
		t.Fatalf("HandOver with 101: %v", err)
	}
	if r := c.response(1); r.status != 500 {
		t.Fatalf("after the refused HandOver: %d", r.status)
	}

	_, addr = startServer(t, tunnelHandler(servetest.NewEcho(""), 0, nil), serve.Options{DisableConnectProtocol: true})
	c = dialH2(t, addr)
	c.until("the server's SETTINGS", func() bool { return c.settings != nil })
	if _, ok := c.settings[h2.SettingEnableConnectProtocol]; ok {
		t.Fatalf("SETTINGS %v with DisableConnectProtocol", c.settings)
	}
	c.request(1, false, ":method", "CONNECT", ":protocol", "websocket", ":scheme", "http",
		":authority", "h", ":path", "/tunnel")
	if r := c.response(1); !r.rst || r.code != h2.ProtocolError {
		t.Fatalf("extended CONNECT unannounced: reset %v, code %v, status %d", r.rst, r.code, r.status)
	}
}

// TestH2ExtendedConnectNotHandedOver: a 2xx answers an extended CONNECT only when the handler
// hands the stream over — the client reads it as the tunnel established (RFC 8441 §5). Any
// other handler's 2xx, held whole or streaming, becomes the server's 501, which ends the
// stream, and a streaming handler's writes fail after it; a handler's own refusal (403) goes
// out as it is; the connection serves on, the tunnel of a handler that hands over included.
func TestH2ExtendedConnectNotHandedOver(t *testing.T) {
	p := servetest.NewEcho("> ")
	streamErr := make(chan error, 1)
	done := make(chan serve.Done, 1)
	_, addr := startServer(t, func(c *serve.Ctx) {
		switch c.Path() {
		case "/hello":
			c.OnDone(func(d serve.Done) { done <- d })
			c.WriteString("Hello World")
		case "/nothing":
		case "/created":
			c.SetStatus(201)
			c.WriteString("made")
		case "/length":
			c.SetHeader("Content-Length", "11")
			c.WriteString("Hello World")
		case "/stream":
			c.Flush()
			for {
				if _, err := c.WriteString("event\n"); err != nil {
					streamErr <- err
					return
				}
				if err := c.Flush(); err != nil {
					streamErr <- err
					return
				}
			}
		case "/forbidden":
			c.SetStatus(403)
			c.WriteString("no")
		case "/tunnel":
			if _, err := c.HandOver(p); err != nil {
				t.Errorf("HandOver: %v", err)
			}
		}
	}, serve.Options{})
	c := dialH2(t, addr)
	id := uint32(1)
	for _, path := range []string{"/hello", "/nothing", "/created", "/length", "/stream"} {
		c.connectTo(id, path)
		r := c.response(id)
		if r.status != 501 || !r.end || r.rst ||
			!strings.HasPrefix(string(r.body), "501 Not Implemented") || strings.Contains(string(r.body), "Hello") {
			t.Errorf("%s: status %d, fields %v, body %q, end %v, reset %v (%v)", path, r.status, r.fields, r.body, r.end, r.rst, r.code)
		}
		id += 2
	}
	if d := receive(t, "the refused request's end", done); d.Status != 501 || d.Err != serve.ErrTunnelRefused {
		t.Errorf("the refused request ended with %d, %v", d.Status, d.Err)
	}
	if err := receive(t, "the streaming handler's error", streamErr); !errors.Is(err, serve.ErrClosed) {
		t.Errorf("the streaming handler's write after the refusal: %v", err)
	}
	c.connectTo(id, "/forbidden")
	if r := c.response(id); r.status != 403 || string(r.body) != "no" || r.rst {
		t.Errorf("the handler's own refusal: status %d, body %q, reset %v", r.status, r.body, r.rst)
	}
	id += 2
	c.connectTo(id, "/tunnel")
	c.until("the tunnel's answer", func() bool { s := c.streams[id]; return s != nil && s.status != 0 })
	r := c.streams[id]
	if r.status != 200 || r.end {
		t.Fatalf("the tunnel: status %d, end %v", r.status, r.end)
	}
	c.data(id, false, []byte("hi"))
	c.until("the echo", func() bool { return string(r.body) == "> hi" })
	c.get(id+2, "/hello")
	if r := c.response(id + 2); r.status != 200 || string(r.body) != "Hello World" {
		t.Fatalf("a GET after: status %d, body %q", r.status, r.body)
	}
}
