package interop

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"net/http"
	"strings"
	"testing"

	coder "github.com/coder/websocket"
	"github.com/gorilla/websocket"

	dws "github.com/dwellhttp/dwell/websocket"
)

// What the clients and package websocket negotiate: permessage-deflate, with and without
// context takeover, subprotocols, and origins.

// compressible is 256 KiB of text that deflates to a few KiB.
var compressible = func() []byte {
	var b []byte
	for i := 0; len(b) < 256<<10; i++ {
		b = append(b, "line "...)
		b = append(b, byte('0'+i%10), byte('0'+i/10%10))
		b = append(b, ": the same words, again and again, as logs and JSON have them\n"...)
	}
	return b[:256<<10]
}()

// wire runs exchange and returns how many bytes the client wrote and read meanwhile.
func wire(c *countingConn, exchange func()) (written, read int64) {
	w, r := c.written.Load(), c.read.Load()
	exchange()
	return c.written.Load() - w, c.read.Load() - r
}

// TestNativeCompression: permessage-deflate is negotiated with each client as it offers it, and
// compresses both ways: a compressible message and its echo take a fraction of their size on
// the wire. With context takeover agreed (coder's CompressionContextTakeover, the server's
// Options.ContextTakeover), a message repeating the one before takes almost nothing even when
// it does not compress on its own; without, it takes its size each time.
func TestNativeCompression(t *testing.T) {
	for _, style := range nativeStyles {
		plain := echoOptions()
		plain.Compress = true
		takeover := echoOptions()
		takeover.Compress, takeover.ContextTakeover = true, true
		s := serveNative(t, style, plain)
		st := serveNative(t, style, takeover)

		t.Run(style+"/gorilla", func(t *testing.T) {
			dial, last := counting()
			d := &websocket.Dialer{NetDialContext: dial, EnableCompression: true}
			c, resp := dialGorilla(t, d, s.url, nil)
			if ext := resp.Header.Get("Sec-WebSocket-Extensions"); !strings.HasPrefix(ext, "permessage-deflate") {
				t.Fatalf("Sec-WebSocket-Extensions %q, want permessage-deflate", ext)
			}
			w, r := wire(last.Load(), func() { gorillaRoundTrip(t, c, websocket.TextMessage, compressible) })
			if w > int64(len(compressible))/8 || r > int64(len(compressible))/8 {
				t.Fatalf("%d bytes echoed with %d bytes written and %d read: not compressed", len(compressible), w, r)
			}
			gorillaRoundTrip(t, c, websocket.BinaryMessage, []byte("short, sent as it is"))
		})

		for _, tc := range []struct {
			name     string
			mode     coder.CompressionMode
			s        *nativeServer
			response string
		}{
			{"no context takeover", coder.CompressionNoContextTakeover, s,
				"permessage-deflate; server_no_context_takeover; client_no_context_takeover"},
			{"context takeover", coder.CompressionContextTakeover, st, "permessage-deflate"},
		} {
			t.Run(style+"/coder/"+tc.name, func(t *testing.T) {
				dial, last := counting()
				c, resp, ctx := dialCoder(t, tc.s.url, &coder.DialOptions{
					CompressionMode: tc.mode,
					HTTPClient:      &http.Client{Transport: &http.Transport{DialContext: dial}},
				})
				if ext := resp.Header.Get("Sec-WebSocket-Extensions"); ext != tc.response {
					t.Fatalf("Sec-WebSocket-Extensions %q, want %q", ext, tc.response)
				}
				w, r := wire(last.Load(), func() { coderRoundTrip(t, ctx, c, coder.MessageText, compressible) })
				if w > int64(len(compressible))/8 || r > int64(len(compressible))/8 {
					t.Fatalf("%d bytes echoed with %d bytes written and %d read: not compressed", len(compressible), w, r)
				}
				// 8 KiB that do not compress, sent again and again: only a window carried over
				// from the message before makes the repeats smaller. compress/flate's fastest
				// level, which both sides use, finds about half of such a repeat in its window;
				// without the window the repeat takes its whole size.
				noise := make([]byte, 8<<10)
				rng := rand.New(rand.NewPCG(1, 2))
				for i := range noise {
					noise[i] = byte(rng.Uint32())
				}
				for i := range 5 {
					w, r := wire(last.Load(), func() { coderRoundTrip(t, ctx, c, coder.MessageBinary, noise) })
					small := w < 6<<10 && r < 6<<10
					if want := i > 0 && tc.mode == coder.CompressionContextTakeover; small != want {
						t.Fatalf("repeat %d of 8 KiB of noise: %d bytes written, %d read (context takeover %v)", i, w, r, tc.mode == coder.CompressionContextTakeover)
					}
				}
			})
		}
	}
}

// TestNativeSubprotocol: the server's order of preference chooses among what the client
// offers (Options.Subprotocols), and a client offering none of them gets none.
func TestNativeSubprotocol(t *testing.T) {
	o := echoOptions()
	o.Subprotocols = []string{"v2.echo.dwell", "v1.echo.dwell"}
	s := serveNative(t, "sequential", o)
	for _, tc := range []struct {
		offer []string
		want  string
	}{
		{[]string{"v1.echo.dwell", "v2.echo.dwell"}, "v2.echo.dwell"},
		{[]string{"v1.echo.dwell", "v3.echo.dwell"}, "v1.echo.dwell"},
		{[]string{"v3.echo.dwell"}, ""},
	} {
		t.Run(strings.Join(tc.offer, ",")+"/gorilla", func(t *testing.T) {
			c, _ := dialGorilla(t, &websocket.Dialer{Subprotocols: tc.offer}, s.url, nil)
			if got := c.Subprotocol(); got != tc.want {
				t.Fatalf("subprotocol %q, want %q", got, tc.want)
			}
			gorillaRoundTrip(t, c, websocket.TextMessage, []byte("spoken"))
		})
		t.Run(strings.Join(tc.offer, ",")+"/coder", func(t *testing.T) {
			c, _, ctx := dialCoder(t, s.url, &coder.DialOptions{Subprotocols: tc.offer})
			if got := c.Subprotocol(); got != tc.want {
				t.Fatalf("subprotocol %q, want %q", got, tc.want)
			}
			coderRoundTrip(t, ctx, c, coder.MessageText, []byte("spoken"))
		})
	}
}

// TestNativeOrigin: a page of another origin is refused with 403, which each client reports as
// a failed handshake; an origin Options.Origins allows, and the server's own, are accepted.
func TestNativeOrigin(t *testing.T) {
	o := echoOptions()
	o.Origins = []string{"trusted.example"}
	s := serveNative(t, "sequential", o)
	host := strings.TrimSuffix(strings.TrimPrefix(s.url, "ws://"), "/ws")
	for _, tc := range []struct {
		origin string
		status int
	}{
		{"http://elsewhere.example", 403},
		{"https://trusted.example", 101},
		{"http://" + host, 101},
	} {
		h := http.Header{"Origin": {tc.origin}}
		t.Run(tc.origin+"/gorilla", func(t *testing.T) {
			c, resp, err := websocket.DefaultDialer.Dial(s.url, h)
			if tc.status == 403 {
				if !errors.Is(err, websocket.ErrBadHandshake) || resp == nil || resp.StatusCode != 403 {
					t.Fatalf("Dial from %s: %v, %v; want a bad handshake answered 403", tc.origin, err, resp)
				}
				return
			}
			if err != nil {
				t.Fatalf("Dial from %s: %v", tc.origin, err)
			}
			defer c.Close()
		})
		t.Run(tc.origin+"/coder", func(t *testing.T) {
			ctx := t.Context()
			c, resp, err := coder.Dial(ctx, s.url, &coder.DialOptions{HTTPHeader: h})
			if tc.status == 403 {
				if err == nil || resp == nil || resp.StatusCode != 403 {
					t.Fatalf("Dial from %s: %v, %v; want an error, answered 403", tc.origin, err, resp)
				}
				return
			}
			if err != nil {
				t.Fatalf("Dial from %s: %v", tc.origin, err)
			}
			c.CloseNow()
		})
	}
}

// TestNativeWriteMessageParks: the sequential style's WriteMessage of a message larger than
// Options.MaxQueued (1 MiB by default) waits for a slow client, as Options.MaxQueued's doc says
// ("WriteMessage parks instead"), rather than meeting the slow-client policy meant for Send.
func TestNativeWriteMessageParks(t *testing.T) {
	s := serveNative(t, "sequential", &dws.Options{MaxMessage: 4 << 20})
	c, _ := dialGorilla(t, websocket.DefaultDialer, s.url, nil)
	msg := bytes.Repeat(megabyte, 2)
	gorillaRoundTrip(t, c, websocket.BinaryMessage, msg)
}
