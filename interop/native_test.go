package interop

import (
	"bytes"
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	coder "github.com/coder/websocket"
	"github.com/gorilla/websocket"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/core/coretest"
	"github.com/dwellhttp/dwell/router"
	dws "github.com/dwellhttp/dwell/websocket"
)

// gorilla/websocket's and coder/websocket's clients against dwell's native package websocket
// (not the bridge): the echo in both of its styles, fragments, pings both ways, the close
// handshake from either side, compression with and without context takeover, subprotocols and
// origins.

// nativeStyles are the package's two ways of serving a connection.
var nativeStyles = []string{"sequential", "event"}

// A nativeServer is an echo of package websocket at /ws: every message back as it came,
// except "bye", which it answers with a close of its own (closeCode, closeReason).
type nativeServer struct {
	url   string
	ended chan error // why each connection ended, as the server saw it
}

// serveNative serves the echo in style with o until the test ends.
func serveNative(t *testing.T, style string, o *dws.Options) *nativeServer {
	t.Helper()
	s := &nativeServer{ended: make(chan error, 64)}
	report := func(err error) {
		select { // never block the loop: a test that does not look has no reader
		case s.ended <- err:
		default:
		}
	}
	r := router.New()
	switch style {
	case "sequential":
		r.GET("/ws", func(cx *core.Ctx) {
			c, err := dws.Accept(cx, o)
			if err != nil {
				return
			}
			for {
				typ, msg, err := c.ReadMessage()
				if err != nil {
					report(err)
					return
				}
				if string(msg) == "bye" {
					c.Close(closeCode, closeReason)
					continue // the client's answer ends ReadMessage
				}
				c.WriteMessage(typ, msg) // a failure ends the next ReadMessage
			}
		})
	default:
		ev := &dws.Events{
			Message: func(c *dws.Conn, typ dws.MessageType, data []byte) {
				if string(data) == "bye" {
					c.Close(closeCode, closeReason)
					return
				}
				c.Send(typ, data)
			},
			Close: func(c *dws.Conn, err error) { report(err) },
		}
		r.GET("/ws", func(cx *core.Ctx) { dws.Serve(cx, o, ev) })
	}
	_, addr := coretest.Serve(t, r.Handler(), core.Options{})
	s.url = "ws://" + addr + "/ws"
	return s
}

// echoOptions are the echo's options: 2 MiB messages, and room in the output for the largest
// (Send and WriteMessage alike refuse a message past MaxQueued, see TestNativeWriteMessageParks).
func echoOptions() *dws.Options { return &dws.Options{MaxMessage: 2 << 20, MaxQueued: 8 << 20} }

// A countingConn counts the bytes a client reads and writes, and its writes, to see what goes on
// the wire: that compression compresses, that a message went in several frames.
type countingConn struct {
	net.Conn
	read, written, writes atomic.Int64
}

func (c *countingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.read.Add(int64(n))
	return n, err
}

func (c *countingConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	c.written.Add(int64(n))
	c.writes.Add(1)
	return n, err
}

// counting returns a dial function whose connections are counted, and the last one's counts.
func counting() (func(ctx context.Context, network, addr string) (net.Conn, error), *atomic.Pointer[countingConn]) {
	var last atomic.Pointer[countingConn]
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		nc, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		c := &countingConn{Conn: nc}
		last.Store(c)
		return c, nil
	}, &last
}

// dialGorilla dials with d, failing the test unless the upgrade succeeds.
func dialGorilla(t *testing.T, d *websocket.Dialer, url string, h http.Header) (*websocket.Conn, *http.Response) {
	t.Helper()
	c, resp, err := d.Dial(url, h)
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetReadDeadline(time.Now().Add(coretest.Patience)) // a hang fails the test
	return c, resp
}

// gorillaRoundTrip writes msg and expects its echo.
func gorillaRoundTrip(t *testing.T, c *websocket.Conn, mt int, msg []byte) {
	t.Helper()
	if err := c.WriteMessage(mt, msg); err != nil {
		t.Fatalf("WriteMessage: %v", err)
	}
	gotType, got, err := c.ReadMessage()
	if err != nil || gotType != mt || !bytes.Equal(got, msg) {
		t.Fatalf("echo of %d bytes of type %d: type %d, %d bytes %.60q, %v", len(msg), mt, gotType, len(got), got, err)
	}
}

// dialCoder dials with opts, failing the test unless the upgrade succeeds, and returns a
// context that ends with the test, or on a hang.
func dialCoder(t *testing.T, url string, opts *coder.DialOptions) (*coder.Conn, *http.Response, context.Context) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), coretest.Patience)
	t.Cleanup(cancel)
	c, resp, err := coder.Dial(ctx, url, opts)
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	t.Cleanup(func() { c.CloseNow() })
	c.SetReadLimit(4 << 20)
	return c, resp, ctx
}

// coderRoundTrip writes msg and expects its echo.
func coderRoundTrip(t *testing.T, ctx context.Context, c *coder.Conn, typ coder.MessageType, msg []byte) {
	t.Helper()
	if err := c.Write(ctx, typ, msg); err != nil {
		t.Fatalf("Write: %v", err)
	}
	gotType, got, err := c.Read(ctx)
	if err != nil || gotType != typ || !bytes.Equal(got, msg) {
		t.Fatalf("echo of %d bytes of type %v: type %v, %d bytes %.60q, %v", len(msg), typ, gotType, len(got), got, err)
	}
}

// TestNativeEcho: both clients' text, binary, empty and 1 MiB messages come back as they went,
// in both styles.
func TestNativeEcho(t *testing.T) {
	for _, style := range nativeStyles {
		s := serveNative(t, style, echoOptions())
		t.Run(style+"/gorilla", func(t *testing.T) {
			c, _ := dialGorilla(t, websocket.DefaultDialer, s.url, nil)
			for i := range 5 {
				gorillaRoundTrip(t, c, websocket.TextMessage, []byte(strings.Repeat("héllo ", i+1)))
				gorillaRoundTrip(t, c, websocket.BinaryMessage, []byte{0, byte(i), 0xff})
			}
			gorillaRoundTrip(t, c, websocket.TextMessage, []byte{})
			gorillaRoundTrip(t, c, websocket.BinaryMessage, megabyte)
		})
		t.Run(style+"/coder", func(t *testing.T) {
			c, _, ctx := dialCoder(t, s.url, nil)
			for i := range 5 {
				coderRoundTrip(t, ctx, c, coder.MessageText, []byte(strings.Repeat("héllo ", i+1)))
				coderRoundTrip(t, ctx, c, coder.MessageBinary, []byte{0, byte(i), 0xff})
			}
			coderRoundTrip(t, ctx, c, coder.MessageText, []byte{})
			coderRoundTrip(t, ctx, c, coder.MessageBinary, megabyte)
		})
	}
}

// TestNativeFragmentedWrites: a message written in pieces, which the clients send as several
// frames, comes back whole.
func TestNativeFragmentedWrites(t *testing.T) {
	piece := []byte(strings.Repeat("a piece of a message written in several writes; ", 20)) // 1 KiB
	for _, style := range nativeStyles {
		s := serveNative(t, style, echoOptions())
		t.Run(style+"/gorilla", func(t *testing.T) {
			dial, last := counting()
			// gorilla/websocket sends a frame each time its write buffer fills.
			d := &websocket.Dialer{NetDialContext: dial, WriteBufferSize: 1024}
			c, _ := dialGorilla(t, d, s.url, nil)
			w, err := c.NextWriter(websocket.TextMessage)
			if err != nil {
				t.Fatal(err)
			}
			before := last.Load().writes.Load()
			var want []byte
			for range 8 {
				w.Write(piece)
				want = append(want, piece...)
			}
			if n := last.Load().writes.Load() - before; n < 2 {
				t.Fatalf("8 KiB written through a 1 KiB buffer in %d writes: not fragmented", n)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			mt, got, err := c.ReadMessage()
			if err != nil || mt != websocket.TextMessage || !bytes.Equal(got, want) {
				t.Fatalf("echo: type %d, %d bytes %.60q, %v; want the %d bytes whole", mt, len(got), got, err, len(want))
			}
		})
		t.Run(style+"/coder", func(t *testing.T) {
			c, _, ctx := dialCoder(t, s.url, nil)
			// coder/websocket frames each Write of a Writer, and Close sends an empty final
			// frame.
			w, err := c.Writer(ctx, coder.MessageBinary)
			if err != nil {
				t.Fatal(err)
			}
			var want []byte
			for i := range 8 {
				w.Write(piece[:100*(i+1)])
				want = append(want, piece[:100*(i+1)]...)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			typ, got, err := c.Read(ctx)
			if err != nil || typ != coder.MessageBinary || !bytes.Equal(got, want) {
				t.Fatalf("echo: type %v, %d bytes %.60q, %v; want the %d bytes whole", typ, len(got), got, err, len(want))
			}
		})
	}
}

// TestNativePings: the server answers the clients' pings with their payload, and its own
// pings (every Options.PingInterval) reach the client, whose pongs keep the connection open.
func TestNativePings(t *testing.T) {
	o := echoOptions()
	o.PingInterval = 10 * time.Millisecond // pings soon, answered long before PongTimeout
	s := serveNative(t, "sequential", o)
	t.Run("gorilla", func(t *testing.T) {
		c, _ := dialGorilla(t, websocket.DefaultDialer, s.url, nil)
		pongs, pings := make(chan string, 1), make(chan string, 16)
		c.SetPongHandler(func(data string) error { pongs <- data; return nil })
		c.SetPingHandler(func(data string) error {
			select {
			case pings <- data:
			default:
			}
			return c.WriteControl(websocket.PongMessage, []byte(data), time.Now().Add(coretest.Patience))
		})
		if err := c.WriteControl(websocket.PingMessage, []byte("are you there"), time.Now().Add(coretest.Patience)); err != nil {
			t.Fatal(err)
		}
		gorillaRoundTrip(t, c, websocket.TextMessage, []byte("after the ping")) // its read takes the pong in
		if got := coretest.Receive(t, "the pong", pongs); got != "are you there" {
			t.Errorf("pong %q", got)
		}
		// The server's pings come while the client reads; a second one comes only after the
		// first was answered.
		for i := 0; len(pings) < 2; i++ {
			gorillaRoundTrip(t, c, websocket.BinaryMessage, []byte{byte(i)})
		}
		gorillaRoundTrip(t, c, websocket.TextMessage, []byte("still open"))
	})
	t.Run("coder", func(t *testing.T) {
		c, _, ctx := dialCoder(t, s.url, nil)
		// Ping waits for its pong, which only a Read of the client's own takes in.
		pinged := make(chan error, 1)
		go func() { pinged <- c.Ping(ctx) }()
		for done := false; !done; {
			coderRoundTrip(t, ctx, c, coder.MessageText, []byte("while pinging"))
			select {
			case err := <-pinged:
				if err != nil {
					t.Fatalf("Ping: %v", err)
				}
				done = true
			default:
			}
		}
	})
}

// TestNativeClose: a close the server starts reaches the clients with its code and reason, and
// one a client starts is answered with its code and seen by the server with its reason.
func TestNativeClose(t *testing.T) {
	for _, style := range nativeStyles {
		s := serveNative(t, style, echoOptions())
		serverSaw := func(t *testing.T, code uint16, reason string, remote bool) {
			t.Helper()
			err := coretest.Receive(t, "the connection's end", s.ended)
			var ce *dws.CloseError
			if !errors.As(err, &ce) || ce.Code != code || ce.Reason != reason || ce.Remote != remote {
				t.Fatalf("the server's connection ended with %v, want a close %d %q (remote %v)", err, code, reason, remote)
			}
		}
		t.Run(style+"/gorilla/by the server", func(t *testing.T) {
			c, _ := dialGorilla(t, websocket.DefaultDialer, s.url, nil)
			c.WriteMessage(websocket.TextMessage, []byte("bye"))
			_, _, err := c.ReadMessage() // answers the close as it returns
			var ce *websocket.CloseError
			if !errors.As(err, &ce) || ce.Code != closeCode || ce.Text != closeReason {
				t.Fatalf("after bye: %v, want a close %d %q", err, closeCode, closeReason)
			}
			c.Close() // gorilla/websocket leaves the TCP connection to its user, which the server waits for
			serverSaw(t, closeCode, closeReason, false)
		})
		t.Run(style+"/gorilla/by the client", func(t *testing.T) {
			c, _ := dialGorilla(t, websocket.DefaultDialer, s.url, nil)
			c.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(4002, "client done"), time.Now().Add(coretest.Patience))
			_, _, err := c.ReadMessage()
			var ce *websocket.CloseError
			if !errors.As(err, &ce) || ce.Code != 4002 {
				t.Fatalf("after the client's close: %v, want its code 4002 echoed", err)
			}
			c.Close()
			serverSaw(t, 4002, "client done", true)
		})
		t.Run(style+"/coder/by the server", func(t *testing.T) {
			c, _, ctx := dialCoder(t, s.url, nil)
			c.Write(ctx, coder.MessageText, []byte("bye"))
			_, _, err := c.Read(ctx)
			var ce coder.CloseError
			if !errors.As(err, &ce) || ce.Code != closeCode || ce.Reason != closeReason {
				t.Fatalf("after bye: %v, want a close %d %q", err, closeCode, closeReason)
			}
			serverSaw(t, closeCode, closeReason, false)
		})
		t.Run(style+"/coder/by the client", func(t *testing.T) {
			c, _, _ := dialCoder(t, s.url, nil)
			// Close returns once the server's close frame has answered the client's.
			if err := c.Close(4002, "client done"); err != nil {
				t.Fatalf("Close: %v", err)
			}
			serverSaw(t, 4002, "client done", true)
		})
	}
}
