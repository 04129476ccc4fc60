package core

import (
	"errors"
	"strings"
	"testing"

	"github.com/dwellhttp/dwell/core/internal/h2"
)

// The extended CONNECT of RFC 8441: a stream handed over (HandOver) as a connection would be.

// tunnelHandler hands an extended CONNECT's stream over to p, after checking that the request
// is served as the GET it stands for; other requests get "hello". A HandOver error is answered
// 500 with its text, and sent on errc.
func tunnelHandler(p Protocol, status int, errc chan<- error) Handler {
	return func(c *Ctx) {
		if c.ConnectProtocol() == "" {
			if c.Path() == "/tunnel" {
				_, err := c.HandOver(p)
				errc <- err
				return
			}
			c.WriteString("hello")
			return
		}
		if c.Method() != "GET" || c.ConnectProtocol() != "websocket" || c.Path() != "/tunnel" {
			c.SetStatus(400)
			c.WriteString(c.Method() + " " + c.ConnectProtocol())
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
	c.until("the server's SETTINGS", func() bool { return c.settings != nil })
	if c.settings[h2.SettingEnableConnectProtocol] != 1 {
		c.t.Fatalf("SETTINGS %v: no SETTINGS_ENABLE_CONNECT_PROTOCOL", c.settings)
	}
	c.request(id, false, ":method", "CONNECT", ":protocol", "websocket", ":scheme", "http",
		":authority", "h", ":path", "/tunnel", "sec-websocket-version", "13")
}

// TestH2ExtendedConnect: the stream's DATA is the protocol's input and its output leaves as
// DATA within the windows (Drained once the client has taken it); Close ends the stream, and
// the connection serves other streams meanwhile and after.
func TestH2ExtendedConnect(t *testing.T) {
	p := newEcho("> ")
	_, addr := startServer(t, tunnelHandler(p, 0, nil), Options{})
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
	if err := receive(t, "Closed", p.closed); err != nil {
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
		p := newEcho("> ")
		_, addr := startServer(t, tunnelHandler(p, 0, nil), Options{})
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
		if err := receive(t, "Closed", p.closed); !errors.Is(err, ErrClosed) {
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
	p := newEcho("> ")
	s, addr := startServer(t, tunnelHandler(p, 0, nil), Options{})
	c := dialH2(t, addr)
	c.connect(1)
	c.until("the answer", func() bool { s := c.streams[1]; return s != nil && s.status != 0 })
	go s.Shutdown(t.Context())
	r := c.response(1)
	if string(r.body) != "going away" || r.rst {
		t.Fatalf("the stream at the shutdown: %q, reset %v", r.body, r.rst)
	}
	receive(t, "Closed", p.closed)
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
	_, addr := startServer(t, tunnelHandler(newEcho(""), 0, errc), Options{})
	c := dialH2(t, addr)
	c.get(1, "/tunnel")
	if err := receive(t, "HandOver's error", errc); !errors.Is(err, ErrHandOverHTTP2) {
		t.Fatalf("HandOver of a GET's stream: %v", err)
	}

	_, addr = startServer(t, tunnelHandler(newEcho(""), 101, errc), Options{})
	c = dialH2(t, addr)
	c.connect(1)
	if err := receive(t, "HandOver's error", errc); !errors.Is(err, errHandOverTunnel) {
		t.Fatalf("HandOver with 101: %v", err)
	}
	if r := c.response(1); r.status != 500 {
		t.Fatalf("after the refused HandOver: %d", r.status)
	}

	_, addr = startServer(t, tunnelHandler(newEcho(""), 0, nil), Options{DisableConnectProtocol: true})
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
