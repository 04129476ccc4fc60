package main

import (
	"bufio"
	"bytes"
	"compress/flate"
	"encoding/binary"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/core/coretest"
)

// runMain is the environment variable that makes the test binary run the command, with the
// variable's value as its flags after -addr.
const runMain = "WEBSOCKET_RUN_MAIN"

// TestMain runs the command itself when asked to by the command tests.
func TestMain(m *testing.M) {
	if args, ok := os.LookupEnv(runMain); ok {
		os.Args = append([]string{"websocket", "-addr", "127.0.0.1:0"}, strings.Fields(args)...)
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// Opcodes (RFC 6455 §5.2).
const (
	opContinuation = 0x0
	opText         = 0x1
	opBinary       = 0x2
	opClose        = 0x8
	opPing         = 0x9
	opPong         = 0xa
)

// A client is the test's side of a connection, written from RFC 6455 alone so that the main
// module needs no WebSocket library: it masks and frames what the test says, fragments
// included, and reads the server's frames as they are.
type client struct {
	t    *testing.T
	conn net.Conn
	r    *bufio.Reader
	resp *http.Response
}

// dial connects to addr, asks for /ws with extra header lines, and fails the test unless the
// answer is a 101 with the right Sec-WebSocket-Accept (RFC 6455 §1.3's example key).
func dial(t *testing.T, addr string, extra ...string) *client {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	conn.SetDeadline(time.Now().Add(coretest.Patience)) // a hang fails the test
	req := "GET /ws HTTP/1.1\r\nHost: " + addr + "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
		"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
	for _, e := range extra {
		req += e + "\r\n"
	}
	if _, err := io.WriteString(conn, req+"\r\n"); err != nil {
		t.Fatal(err)
	}
	c := &client{t: t, conn: conn, r: bufio.NewReader(conn)}
	c.resp, err = http.ReadResponse(c.r, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.resp.StatusCode != 101 || c.resp.Header.Get("Sec-WebSocket-Accept") != "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=" {
		t.Fatalf("upgrade answered %d, accept %q", c.resp.StatusCode, c.resp.Header.Get("Sec-WebSocket-Accept"))
	}
	return c
}

// frame writes one masked frame.
func (c *client) frame(fin, rsv1 bool, op byte, payload []byte) {
	c.t.Helper()
	b0 := op
	if fin {
		b0 |= 0x80
	}
	if rsv1 {
		b0 |= 0x40
	}
	b := []byte{b0}
	switch n := len(payload); {
	case n < 126:
		b = append(b, 0x80|byte(n))
	case n < 1<<16:
		b = binary.BigEndian.AppendUint16(append(b, 0x80|126), uint16(n))
	default:
		b = binary.BigEndian.AppendUint64(append(b, 0x80|127), uint64(n))
	}
	key := [4]byte{0x5a, 0x0f, 0xc3, 0x99}
	b = append(b, key[:]...)
	for i, x := range payload {
		b = append(b, x^key[i%4])
	}
	if _, err := c.conn.Write(b); err != nil {
		c.t.Fatal(err)
	}
}

// read reads the server's next frame, failing the test on a masked one (§5.1).
func (c *client) read() (fin, rsv1 bool, op byte, payload []byte) {
	c.t.Helper()
	var h [2]byte
	if _, err := io.ReadFull(c.r, h[:]); err != nil {
		c.t.Fatalf("reading a frame: %v", err)
	}
	if h[1]&0x80 != 0 {
		c.t.Fatal("the server masked a frame")
	}
	n := uint64(h[1] & 0x7f)
	switch n {
	case 126, 127:
		ext := make([]byte, 2+6*(n-126))
		if _, err := io.ReadFull(c.r, ext); err != nil {
			c.t.Fatal(err)
		}
		n = 0
		for _, x := range ext {
			n = n<<8 | uint64(x)
		}
	}
	payload = make([]byte, n)
	if _, err := io.ReadFull(c.r, payload); err != nil {
		c.t.Fatalf("reading a frame's payload: %v", err)
	}
	return h[0]&0x80 != 0, h[0]&0x40 != 0, h[0] & 0x0f, payload
}

// expect reads the next message, reassembled from its frames and inflated when compressed, and
// checks its opcode and payload.
func (c *client) expect(op byte, want []byte) {
	c.t.Helper()
	fin, rsv1, gotOp, msg := c.read()
	for !fin {
		var more []byte
		fin, _, _, more = c.read()
		msg = append(msg, more...)
	}
	if rsv1 {
		// RFC 7692 §7.2.2: the payload is a DEFLATE stream without its final empty block.
		r := flate.NewReader(io.MultiReader(bytes.NewReader(msg), strings.NewReader("\x00\x00\xff\xff\x01\x00\x00\xff\xff")))
		var err error
		if msg, err = io.ReadAll(r); err != nil {
			c.t.Fatalf("inflating the echo: %v", err)
		}
	}
	if gotOp != op || !bytes.Equal(msg, want) {
		c.t.Fatalf("got opcode %d %.60q (%d bytes), want opcode %d %.60q (%d bytes)", gotOp, msg, len(msg), op, want, len(want))
	}
}

// expectClose reads a close frame with code, and then the end of the connection.
func (c *client) expectClose(code uint16) {
	c.t.Helper()
	_, _, op, p := c.read()
	if op != opClose || len(p) < 2 || binary.BigEndian.Uint16(p) != code {
		c.t.Fatalf("got opcode %d %.60q, want a close frame with %d", op, p, code)
	}
	if n, err := c.r.Read(make([]byte, 1)); err != io.EOF {
		c.t.Fatalf("after the close frame: %d bytes, %v; want the end of the connection", n, err)
	}
	c.conn.Close() // as a client does: the server, which lingers over the client's last bytes, sees the end
}

// echoes checks the echo of a text, a binary and a fragmented message (with a ping between the
// fragments, answered at once, RFC 6455 §5.4), then the close handshake.
func echoes(c *client) {
	c.t.Helper()
	c.frame(true, false, opText, []byte("hello, wörld"))
	c.expect(opText, []byte("hello, wörld"))
	c.frame(true, false, opBinary, []byte{0, 1, 0xfe, 0xff})
	c.expect(opBinary, []byte{0, 1, 0xfe, 0xff})
	c.frame(true, false, opText, nil)
	c.expect(opText, nil)
	c.frame(false, false, opBinary, []byte("frag"))
	c.frame(true, false, opPing, []byte("ping"))
	c.frame(false, false, opContinuation, []byte("men"))
	c.frame(true, false, opContinuation, []byte("ted"))
	c.expect(opPong, []byte("ping"))
	c.expect(opBinary, []byte("fragmented"))
	big := bytes.Repeat([]byte("0123456789abcdef"), 1<<16) // 1 MiB, over the output's high-water mark
	c.frame(true, false, opBinary, big)
	c.expect(opBinary, big)
	c.frame(true, false, opClose, []byte{0x03, 0xe8}) // 1000
	c.expectClose(1000)
}

// TestEcho: the routes, served in the test's process, echo messages as they came.
func TestEcho(t *testing.T) {
	_, addr := coretest.Serve(t, routes(options(false, 16<<20)), core.Options{})
	echoes(dial(t, addr))
}

// TestPage: GET / is the page, which connects to /ws.
func TestPage(t *testing.T) {
	_, addr := coretest.Serve(t, routes(options(false, 16<<20)), core.Options{})
	resp, err := (&http.Client{Timeout: coretest.Patience}).Get("http://" + addr + "/")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/html; charset=utf-8" ||
		!bytes.Contains(body, []byte(`"/ws"`)) || !bytes.Contains(body, []byte("new WebSocket(")) {
		t.Fatalf("GET /: %d %q %.60q", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
}

// TestCommand: the command prints "listening http://ADDR" with the address it listens on,
// echoes, answers an offer of permessage-deflate with nothing when not told -compress, and
// exits cleanly on SIGTERM.
func TestCommand(t *testing.T) {
	cmd := coretest.StartCommand(t, runMain, "")
	echoes(dial(t, cmd.Addr))
	c := dial(t, cmd.Addr, "Sec-WebSocket-Extensions: permessage-deflate")
	if ext := c.resp.Header.Get("Sec-WebSocket-Extensions"); ext != "" {
		t.Fatalf("permessage-deflate accepted without -compress: %q", ext)
	}
	c.frame(true, false, opClose, nil) // closed by the client, so that the shutdown waits for none
	if _, _, op, p := c.read(); op != opClose || len(p) != 0 {
		t.Fatalf("got opcode %d %.60q, want an empty close frame answering the client's", op, p)
	}
	c.conn.Close()
	cmd.Terminate()
	if err := cmd.Wait(coretest.Patience); err != nil {
		t.Fatalf("after SIGTERM: %v", err)
	}
}

// TestCommandFlags: with -compress the command accepts permessage-deflate and echoes a
// compressed message (compressed again); with -max-message a message over the limit, even one
// that only inflates past it, closes the connection with 1009.
func TestCommandFlags(t *testing.T) {
	cmd := coretest.StartCommand(t, runMain, "-compress -max-message 1000")
	offer := "Sec-WebSocket-Extensions: permessage-deflate; client_no_context_takeover; server_no_context_takeover"
	c := dial(t, cmd.Addr, offer)
	if ext := c.resp.Header.Get("Sec-WebSocket-Extensions"); !strings.HasPrefix(ext, "permessage-deflate") {
		t.Fatalf("Sec-WebSocket-Extensions %q, want permessage-deflate accepted", ext)
	}
	msg := bytes.Repeat([]byte("echo "), 200) // 1000 bytes: at the limit, and compressible
	c.frame(true, true, opText, deflate(msg))
	c.expect(opText, msg)
	c.frame(true, false, opText, msg)
	c.expect(opText, msg)
	c.frame(true, true, opText, deflate(append(msg, '!'))) // 1001 bytes, inflated
	c.expectClose(1009)

	c = dial(t, cmd.Addr)
	c.frame(false, false, opBinary, make([]byte, 600))
	c.frame(true, false, opContinuation, make([]byte, 401))
	c.expectClose(1009)
}

// deflate compresses msg as RFC 7692 §7.2.1 asks: a DEFLATE stream flushed to a byte boundary,
// without the 4 bytes of the flush's empty block.
func deflate(msg []byte) []byte {
	var b bytes.Buffer
	w, _ := flate.NewWriter(&b, flate.BestCompression)
	w.Write(msg)
	w.Flush()
	return bytes.TrimSuffix(b.Bytes(), []byte{0, 0, 0xff, 0xff})
}
