package main

import (
	"bufio"
	"crypto/rand"
	"crypto/sha1"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/dwellhttp/dwell/core/coretest"
)

// A wsClient is a WebSocket client (RFC 6455) for the tests of GET /todos/ws: it reads the
// server's text messages, answers pings, and closes. It offers no compression, so every frame
// the server sends is a whole message, unmasked.
type wsClient struct {
	t    testing.TB
	conn net.Conn
	br   *bufio.Reader
}

// dialWS opens a WebSocket to addr (host:port) at target (path and query), with more header
// fields ("Name: value"), failing the test unless the server upgrades it.
func dialWS(t testing.TB, addr, target string, fields ...string) *wsClient {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	var k [16]byte
	rand.Read(k[:])
	key := base64.StdEncoding.EncodeToString(k[:])
	fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"+
		"Sec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\nAccept-Encoding: gzip\r\n", target, addr, key)
	for _, f := range fields {
		io.WriteString(conn, f+"\r\n")
	}
	io.WriteString(conn, "\r\n")
	c := &wsClient{t: t, conn: conn, br: bufio.NewReader(conn)}
	conn.SetReadDeadline(time.Now().Add(coretest.Patience))
	resp, err := http.ReadResponse(c.br, &http.Request{Method: "GET"})
	if err != nil {
		t.Fatalf("GET %s: %v", target, err)
	}
	sum := sha1.Sum([]byte(key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"))
	if resp.StatusCode != 101 || resp.Header.Get("Sec-WebSocket-Accept") != base64.StdEncoding.EncodeToString(sum[:]) {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("GET %s: %d %q %q, not an upgrade", target, resp.StatusCode, resp.Header, b)
	}
	return c
}

// read returns the next text message, decoded as a poll's answer.
func (c *wsClient) read() changesAnswer {
	c.t.Helper()
	payload := c.readText()
	var a changesAnswer
	if err := json.Unmarshal(payload, &a); err != nil || a.Changes == nil {
		c.t.Fatalf("a message that is not a poll's answer: %q (%v)", payload, err)
	}
	return a
}

// readText returns the next text message; pings are answered. A close from the server fails
// the test.
func (c *wsClient) readText() []byte {
	c.t.Helper()
	payload, closed := c.next()
	if closed {
		c.t.Fatalf("the server closed the socket: % x", payload)
	}
	return payload
}

// readClose reads the server's close frame, failing the test if a message comes first, and
// ends the connection as a client does (RFC 6455 §5.5.1, §7.1.1): it answers the close, waits
// for the server to close the TCP connection, and closes its own end — without which the server
// lingers, waiting for it. It returns the close's code.
func (c *wsClient) readClose() uint16 {
	c.t.Helper()
	payload, closed := c.next()
	if !closed || len(payload) < 2 {
		c.t.Fatalf("a message where a close was due: %q", payload)
	}
	c.write(0x8, payload[:2])
	io.Copy(io.Discard, c.br)
	c.conn.Close()
	return binary.BigEndian.Uint16(payload)
}

// next returns the payload of the next text message or close frame, and which it is; pings are
// answered.
func (c *wsClient) next() ([]byte, bool) {
	c.t.Helper()
	for {
		c.conn.SetReadDeadline(time.Now().Add(coretest.Patience))
		var h [2]byte
		if _, err := io.ReadFull(c.br, h[:]); err != nil {
			c.t.Fatalf("reading the socket: %v", err)
		}
		n := uint64(h[1] & 0x7f)
		switch n {
		case 126:
			var b [2]byte
			io.ReadFull(c.br, b[:])
			n = uint64(binary.BigEndian.Uint16(b[:]))
		case 127:
			var b [8]byte
			io.ReadFull(c.br, b[:])
			n = binary.BigEndian.Uint64(b[:])
		}
		payload := make([]byte, n)
		if _, err := io.ReadFull(c.br, payload); err != nil {
			c.t.Fatalf("reading the socket: %v", err)
		}
		switch op := h[0] & 0x0f; {
		case h[0]&0xf0 != 0x80 || h[1]&0x80 != 0:
			c.t.Fatalf("a frame not final, masked, or with a reserved bit: % x", h)
		case op == 0x9:
			c.write(0xa, payload)
		case op == 0x1:
			return payload, false
		case op == 0x8:
			return payload, true
		default:
			c.t.Fatalf("a frame of opcode %d: %q", op, payload)
		}
	}
}

// close starts the close handshake; the server's answer is not waited for.
func (c *wsClient) close() { c.write(0x8, binary.BigEndian.AppendUint16(nil, 1000)) }

// write sends one final frame of op, masked as a client's must be.
func (c *wsClient) write(op byte, payload []byte) {
	b := append([]byte{0x80 | op, 0x80 | byte(len(payload))}, 0, 0, 0, 0) // control frames: < 126 bytes
	rand.Read(b[2:6])
	for i, p := range payload {
		b = append(b, p^b[2+i%4])
	}
	c.conn.Write(b)
}

// changesOf returns the seqs and ops of changes, for comparisons: "2 create, 3 update".
func changesOf(changes []change) string {
	s := ""
	for i, ch := range changes {
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprintf("%d %s", ch.Seq, ch.Op)
	}
	return s
}
