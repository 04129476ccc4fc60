package websocket

import (
	"bytes"
	"compress/flate"
	"io"
	"strings"
	"testing"

	"github.com/dwellhttp/dwell/websocket/internal/frame"
)

// The test's side of permessage-deflate, from RFC 7692 §7.2 and compress/flate alone.

// deflateMsg compresses a message as §7.2.1 says: DEFLATE, a sync flush, its 4-byte tail
// removed. With w, the window carries over (context takeover).
func deflateMsg(t *testing.T, w *flate.Writer, buf *bytes.Buffer, msg string) []byte {
	t.Helper()
	if w == nil {
		buf = new(bytes.Buffer)
		w, _ = flate.NewWriter(buf, flate.BestCompression)
	}
	buf.Reset()
	w.Write([]byte(msg))
	w.Flush()
	b := bytes.Clone(buf.Bytes())
	if !bytes.HasSuffix(b, []byte{0, 0, 0xff, 0xff}) {
		t.Fatal("a sync flush ends otherwise")
	}
	return b[:len(b)-4]
}

// inflateMsg inflates a compressed message with the dictionary dict (the window of the
// messages before, with context takeover).
func inflateMsg(t *testing.T, payload, dict []byte) string {
	t.Helper()
	r := flate.NewReaderDict(io.MultiReader(bytes.NewReader(payload), strings.NewReader("\x00\x00\xff\xff\x01\x00\x00\xff\xff")), dict)
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("inflating the server's message: %v", err)
	}
	return string(b)
}

func TestCompressNegotiation(t *testing.T) {
	cases := []struct {
		offer, want string
		takeover    bool
	}{
		{"permessage-deflate", "permessage-deflate; server_no_context_takeover; client_no_context_takeover", false},
		{"permessage-deflate; client_max_window_bits", "permessage-deflate; server_no_context_takeover; client_no_context_takeover", false},
		{"permessage-deflate; server_max_window_bits=10", "permessage-deflate; server_no_context_takeover; client_no_context_takeover; server_max_window_bits=10", false},
		{"permessage-deflate; bogus=1", "", false},
		{"permessage-deflate; bogus=1, permessage-deflate; client_no_context_takeover", "permessage-deflate; server_no_context_takeover; client_no_context_takeover", false},
		{"permessage-deflate; server_max_window_bits=16", "", false},
		{"x-webkit-deflate-frame", "", false},
		{"permessage-deflate", "permessage-deflate", true},
		{"permessage-deflate; server_no_context_takeover", "permessage-deflate; server_no_context_takeover", true},
	}
	for _, tc := range cases {
		t.Run(tc.offer, func(t *testing.T) {
			c, resp := dial(t, serve(t, echo(&Options{Compress: true, ContextTakeover: tc.takeover})), "Sec-WebSocket-Extensions: "+tc.offer)
			if got := resp.Header.Get("Sec-WebSocket-Extensions"); got != tc.want {
				t.Fatalf("answered %q, want %q", got, tc.want)
			}
			c.send(frame.Text, "plain")
			c.expect(frame.Text, "plain")
		})
	}
	// More field lines than the handshake keeps borrowed (browsers send one): negotiated from
	// the request's copies, the same.
	t.Run("five field lines", func(t *testing.T) {
		lines := []string{"x-one", "x-two", "x-three", "x-four", "permessage-deflate; client_no_context_takeover"}
		extra := make([]string, len(lines))
		for i, l := range lines {
			extra[i] = "Sec-WebSocket-Extensions: " + l
		}
		c, resp := dial(t, serve(t, echo(&Options{Compress: true})), extra...)
		if got, want := resp.Header.Get("Sec-WebSocket-Extensions"), "permessage-deflate; server_no_context_takeover; client_no_context_takeover"; got != want {
			t.Fatalf("answered %q, want %q", got, want)
		}
		c.send(frame.Text, "plain")
		c.expect(frame.Text, "plain")
	})
	t.Run("not enabled", func(t *testing.T) {
		_, resp := dial(t, serve(t, echo(nil)), "Sec-WebSocket-Extensions: permessage-deflate")
		if got := resp.Header.Get("Sec-WebSocket-Extensions"); got != "" {
			t.Fatalf("answered %q without Options.Compress", got)
		}
	})
}

func TestCompressedEcho(t *testing.T) {
	long := strings.Repeat(`{"name":"dwell","kind":"websocket"}`, 20)
	for _, st := range styles {
		t.Run(st.name, func(t *testing.T) {
			c, _ := dial(t, serve(t, st.h(&Options{Compress: true})), "Sec-WebSocket-Extensions: permessage-deflate")
			for _, msg := range []string{long, "short", "", long} {
				c.write(c.frameBytes(frame.Text, deflateMsg(t, nil, nil, msg), true, true, false))
				h, p := c.next()
				got := string(p)
				if h.RSV1 {
					got = inflateMsg(t, p, nil)
				}
				if got != msg || h.Opcode != frame.Text {
					t.Fatalf("echoed %v %.40q, want text %.40q", h.Opcode, got, msg)
				}
				if h.RSV1 != (len(msg) >= defaultCompressMin) {
					t.Errorf("a message of %d bytes sent compressed: %v", len(msg), h.RSV1)
				}
			}
			// Fragmented: RSV1 on the first frame only (RFC 7692 §6.1).
			z := deflateMsg(t, nil, nil, long)
			c.write(c.frameBytes(frame.Binary, z[:10], false, true, false))
			c.write(c.frameBytes(frame.Continuation, z[10:], true, false, false))
			h, p := c.next()
			if h.Opcode != frame.Binary || inflateMsg(t, p, nil) != long {
				t.Fatal("fragmented compressed message not echoed")
			}
			// Uncompressed messages are still messages.
			c.send(frame.Binary, "raw")
			c.expect(frame.Binary, "raw")
		})
	}
}

func TestCompressedErrors(t *testing.T) {
	bomb := deflateMsg(t, nil, nil, strings.Repeat("\x00", 1<<20))
	cases := []struct {
		name string
		b    func(c *client) []byte
		code uint16
	}{
		{"rsv1 on a continuation", func(c *client) []byte {
			return append(c.frameBytes(frame.Text, []byte("a"), false, false, false), c.frameBytes(frame.Continuation, []byte("b"), true, true, false)...)
		}, 1002},
		{"rsv1 on a ping", func(c *client) []byte { return c.frameBytes(frame.Ping, nil, true, true, false) }, 1002},
		{"not deflate", func(c *client) []byte { return c.frameBytes(frame.Binary, []byte{0xff, 0xff, 0xff}, true, true, false) }, 1007},
		{"inflates past the limit", func(c *client) []byte { return c.frameBytes(frame.Binary, bomb, true, true, false) }, 1009},
		{"inflates to bad utf-8", func(c *client) []byte {
			return c.frameBytes(frame.Text, deflateMsg(t, nil, nil, "ok \xff"), true, true, false)
		}, 1007},
	}
	for _, st := range styles {
		for _, tc := range cases {
			t.Run(st.name+"/"+tc.name, func(t *testing.T) {
				c, _ := dial(t, serve(t, st.h(&Options{Compress: true, MaxMessage: 64 << 10})), "Sec-WebSocket-Extensions: permessage-deflate")
				c.write(tc.b(c))
				c.expectClose(tc.code)
			})
		}
	}
}

// TestContextTakeover: with it allowed and asked for, both sides carry their windows from one
// message to the next.
func TestContextTakeover(t *testing.T) {
	c, resp := dial(t, serve(t, echoServe(&Options{Compress: true, ContextTakeover: true})), "Sec-WebSocket-Extensions: permessage-deflate")
	if got := resp.Header.Get("Sec-WebSocket-Extensions"); got != "permessage-deflate" {
		t.Fatalf("answered %q", got)
	}
	var buf bytes.Buffer
	w, _ := flate.NewWriter(&buf, flate.BestCompression)
	var window []byte // what the server sent, the client's dictionary for the next message
	msg := strings.Repeat("the same words again and again; ", 10)
	for i := range 3 {
		z := deflateMsg(t, w, &buf, msg)
		if i > 0 && len(z) > 20 {
			t.Errorf("message %d compressed to %d bytes: the client's window did not carry over", i, len(z))
		}
		c.write(c.frameBytes(frame.Text, z, true, true, false))
		h, p := c.next()
		if !h.RSV1 {
			t.Fatal("the echo is not compressed")
		}
		if got := inflateMsg(t, p, window); got != msg {
			t.Fatalf("message %d echoed as %.40q", i, got)
		}
		if i > 0 && len(p) > 20 {
			t.Errorf("echo %d compressed to %d bytes: the server's window did not carry over", i, len(p))
		}
		window = append(window, msg...)
	}
}
