package websocket

import (
	"encoding/binary"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/core/coretest"
	"github.com/dwellhttp/dwell/websocket/internal/frame"
)

// A client is the test's side of a WebSocket connection, written from RFC 6455 alone: it frames
// what the test says, masked or not, whole or in pieces, and reads the server's frames as
// they are, so that every rule can be broken on purpose.
type client struct {
	*coretest.Conn
	key [4]byte
}

// testKey is a valid Sec-WebSocket-Key, and testAccept its answer: RFC 6455 §1.3's example.
const (
	testKey    = "dGhlIHNhbXBsZSBub25jZQ=="
	testAccept = "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="
)

// upgradeRequest is a valid opening handshake for path, with extra header lines.
func upgradeRequest(path string, extra ...string) string {
	var b strings.Builder
	b.WriteString("GET " + path + " HTTP/1.1\r\nHost: example.com\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n")
	b.WriteString("Sec-WebSocket-Key: " + testKey + "\r\nSec-WebSocket-Version: 13\r\n")
	for _, e := range extra {
		b.WriteString(e + "\r\n")
	}
	b.WriteString("\r\n")
	return b.String()
}

// serve serves h for the test and returns its address.
func serve(t *testing.T, h core.Handler) string {
	t.Helper()
	_, addr := coretest.Serve(t, h, core.Options{})
	return addr
}

// dial connects to addr and upgrades, failing the test unless the answer is a 101 with the
// right accept.
func dial(t *testing.T, addr string, extra ...string) (*client, *http.Response) {
	t.Helper()
	c := &client{Conn: coretest.Dial(t, addr), key: [4]byte{0x37, 0xfa, 0x21, 0x3d}}
	c.Send(upgradeRequest("/", extra...))
	resp, _ := c.Response("GET")
	if resp.StatusCode != 101 {
		t.Fatalf("upgrade answered %d", resp.StatusCode)
	}
	if got := resp.Header.Get("Sec-WebSocket-Accept"); got != testAccept {
		t.Fatalf("Sec-WebSocket-Accept %q, want %q", got, testAccept)
	}
	return c, resp
}

// frameBytes encodes a client frame: masked with the client's key unless unmasked is set.
func (c *client) frameBytes(op frame.Opcode, payload []byte, fin, rsv1, unmasked bool) []byte {
	h := frame.Header{Fin: fin, RSV1: rsv1, Opcode: op, Length: int64(len(payload)), Masked: !unmasked, Key: c.key}
	b := frame.AppendHeader(nil, h)
	p := append([]byte(nil), payload...)
	if !unmasked {
		frame.Mask(c.key, 0, p)
	}
	return append(b, p...)
}

// send writes one masked, final frame.
func (c *client) send(op frame.Opcode, payload string) {
	c.T.Helper()
	c.write(c.frameBytes(op, []byte(payload), true, false, false))
}

func (c *client) write(b []byte) {
	c.T.Helper()
	if _, err := c.TCPConn.Write(b); err != nil {
		c.T.Fatal(err)
	}
}

// next reads the server's next frame, failing the test on a masked one (§5.1).
func (c *client) next() (frame.Header, []byte) {
	c.T.Helper()
	var b [frame.MaxHeaderSize]byte
	n := 0
	for {
		h, hn, err := frame.Parse(b[:n])
		if err != nil {
			c.T.Fatalf("server frame: %v", err)
		}
		if hn > 0 {
			if h.Masked {
				c.T.Fatal("the server masked a frame")
			}
			p := make([]byte, h.Length)
			if _, err := io.ReadFull(c.R, p); err != nil {
				c.T.Fatalf("reading a frame's payload: %v", err)
			}
			return h, p
		}
		if _, err := io.ReadFull(c.R, b[n:n+1]); err != nil {
			c.T.Fatalf("reading a frame: %v", err)
		}
		n++
	}
}

// expect reads the next frame and checks its opcode and payload.
func (c *client) expect(op frame.Opcode, payload string) {
	c.T.Helper()
	h, p := c.next()
	if h.Opcode != op || string(p) != payload || !h.Fin {
		c.T.Fatalf("got %v %.60q (%d bytes, fin %v), want %v %.60q (%d bytes)", h.Opcode, p, len(p), h.Fin, op, payload, len(payload))
	}
}

// expectClose reads the next frame, which must be a close with code, and then the end of the
// connection: the server's answer to the client's close, or its failing of the connection.
func (c *client) expectClose(code uint16) {
	c.T.Helper()
	c.readClose(code)
	c.ExpectEOF()
	c.TCPConn.Close() // as a client does: the server, which may be lingering, sees the end
}

// answerClose reads the close frame of a close the server began, answers it as §5.5.1 asks,
// and expects the end of the connection.
func (c *client) answerClose(code uint16) {
	c.T.Helper()
	c.readClose(code)
	c.send(frame.Close, closePayload(code, ""))
	c.ExpectEOF()
	c.TCPConn.Close()
}

// readClose reads the next frame, which must be a close frame with code.
func (c *client) readClose(code uint16) {
	c.T.Helper()
	h, p := c.next()
	if h.Opcode != frame.Close {
		c.T.Fatalf("got %v %.60q (%d bytes), want a close frame with %d", h.Opcode, p, len(p), code)
	}
	got, reason, err := frame.ParseClose(p)
	if err != nil || got != code {
		c.T.Fatalf("close frame %d %q (%v), want %d", got, reason, err, code)
	}
}

// closePayload is a close frame's payload.
func closePayload(code uint16, reason string) string {
	return string(binary.BigEndian.AppendUint16(nil, code)) + reason
}

// echo is the sequential style's echo handler.
func echo(o *Options) core.Handler {
	return func(cx *core.Ctx) {
		c, err := Accept(cx, o)
		if err != nil {
			return
		}
		for {
			typ, msg, err := c.ReadMessage()
			if err != nil {
				return
			}
			if c.WriteMessage(typ, msg) != nil {
				return
			}
		}
	}
}

// echoEvents is the event style's echo.
var echoEvents = &Events{Message: func(c *Conn, typ MessageType, data []byte) { c.Send(typ, data) }}

func echoServe(o *Options) core.Handler {
	return func(cx *core.Ctx) { Serve(cx, o, echoEvents) }
}
