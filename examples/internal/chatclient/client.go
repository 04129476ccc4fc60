// Package chatclient is a small WebSocket client (RFC 6455), written for the tests of the chat
// examples (examples/chat, examples/chatcluster) from the RFC alone, so that the main module
// needs no WebSocket library: it opens GET /ws?after=N, reads the server's text frames as the
// chat's JSON, sends masked text frames, answers pings and does the close handshake. It does
// not compress, and it reads one frame at a time: the chat's frames are whole messages. Frame,
// Answer, CatchUp and Receive read the chat's frames and check what the socket promises: the
// messages after the cursor, in order, none lost or given twice.
//
// Its methods return errors rather than failing a test, so that a test may use a Client from
// any goroutine; a Client is for one goroutine at a time.
package chatclient

import (
	"bufio"
	"crypto/rand"
	"crypto/sha1"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/dwellhttp/dwell/examples/internal/chatapi"
)

// Opcodes of RFC 6455 §5.2 the client meets.
const (
	opText  = 0x1
	opClose = 0x8
	opPing  = 0x9
	opPong  = 0xa
)

// A Client is one WebSocket connection to a chat server.
type Client struct {
	conn net.Conn
	br   *bufio.Reader
}

// A CloseError is the server's close frame: its code and reason.
type CloseError struct {
	Code   uint16
	Reason string
}

func (e *CloseError) Error() string {
	return fmt.Sprintf("closed by the server with %d %q", e.Code, e.Reason)
}

// A HandshakeError is an upgrade the server refused: its status and body.
type HandshakeError struct {
	Status int
	Body   string
}

func (e *HandshakeError) Error() string {
	return fmt.Sprintf("upgrade refused with %d: %s", e.Status, strings.TrimSpace(e.Body))
}

// Dial opens a WebSocket to the server at addr (host:port) on path (with its query), and gives
// up after patience. Every read and write of the Client has the same deadline, patience from
// the Dial: a test fails on a hang rather than waiting for ever.
func Dial(addr, path string, patience time.Duration) (*Client, error) {
	conn, err := net.DialTimeout("tcp", addr, patience)
	if err != nil {
		return nil, err
	}
	conn.SetDeadline(time.Now().Add(patience))
	var k [16]byte
	rand.Read(k[:])
	key := base64.StdEncoding.EncodeToString(k[:])
	fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"+
		"Sec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n\r\n", path, addr, key)
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, &http.Request{Method: "GET"})
	if err != nil {
		conn.Close()
		return nil, err
	}
	if resp.StatusCode != 101 {
		b, _ := io.ReadAll(resp.Body)
		conn.Close()
		return nil, &HandshakeError{resp.StatusCode, string(b)}
	}
	sum := sha1.Sum([]byte(key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"))
	if got := resp.Header.Get("Sec-WebSocket-Accept"); got != base64.StdEncoding.EncodeToString(sum[:]) {
		conn.Close()
		return nil, fmt.Errorf("Sec-WebSocket-Accept %q does not answer the key", got)
	}
	return &Client{conn: conn, br: br}, nil
}

// ReadText returns the next text message, answering the pings that come before it. A close
// frame from the server is answered (§5.5.1) and returned as a *CloseError.
func (c *Client) ReadText() ([]byte, error) {
	for {
		op, payload, err := c.readFrame()
		if err != nil {
			return nil, err
		}
		switch op {
		case opText:
			return payload, nil
		case opPing:
			if err := c.writeFrame(opPong, payload); err != nil {
				return nil, err
			}
		case opPong:
		case opClose:
			ce := &CloseError{Code: 1005}
			if len(payload) >= 2 {
				ce.Code, ce.Reason = binary.BigEndian.Uint16(payload), string(payload[2:])
			}
			c.writeFrame(opClose, payload[:min(len(payload), 2)])
			c.conn.Close()
			return nil, ce
		default:
			return nil, fmt.Errorf("unexpected frame with opcode %d", op)
		}
	}
}

// ReadJSON reads the next text message into v.
func (c *Client) ReadJSON(v any) error {
	b, err := c.ReadText()
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%w: %q", err, b)
	}
	return nil
}

// WriteText sends a text message in one masked frame.
func (c *Client) WriteText(s string) error { return c.writeFrame(opText, []byte(s)) }

// Close starts the close handshake with 1000 and closes the TCP connection once the server has
// answered (or the connection failed): what came before the answer is dropped.
func (c *Client) Close() error {
	defer c.conn.Close()
	if err := c.writeFrame(opClose, binary.BigEndian.AppendUint16(nil, 1000)); err != nil {
		return err
	}
	for {
		op, _, err := c.readFrame()
		if err != nil || op == opClose {
			return err
		}
	}
}

// Drop closes the TCP connection with no close frame, as a client that vanishes does.
func (c *Client) Drop() error { return c.conn.Close() }

// readFrame reads one whole frame of the server's, which must be final and unmasked.
func (c *Client) readFrame() (op byte, payload []byte, err error) {
	var h [2]byte
	if _, err := io.ReadFull(c.br, h[:]); err != nil {
		return 0, nil, err
	}
	if h[0]&0x80 == 0 || h[0]&0x70 != 0 || h[1]&0x80 != 0 {
		return 0, nil, fmt.Errorf("a frame not final, with a reserved bit or masked: % x", h)
	}
	n := uint64(h[1] & 0x7f)
	switch n {
	case 126:
		var b [2]byte
		_, err = io.ReadFull(c.br, b[:])
		n = uint64(binary.BigEndian.Uint16(b[:]))
	case 127:
		var b [8]byte
		_, err = io.ReadFull(c.br, b[:])
		n = binary.BigEndian.Uint64(b[:])
	}
	if err != nil {
		return 0, nil, err
	}
	if n > 16<<20 {
		return 0, nil, errors.New("a frame over 16 MiB")
	}
	payload = make([]byte, n)
	if _, err := io.ReadFull(c.br, payload); err != nil {
		return 0, nil, err
	}
	return h[0] & 0x0f, payload, nil
}

// writeFrame sends one final frame, masked as a client's must be (§5.3).
func (c *Client) writeFrame(op byte, payload []byte) error {
	b := []byte{0x80 | op}
	switch n := len(payload); {
	case n < 126:
		b = append(b, 0x80|byte(n))
	case n <= 0xffff:
		b = binary.BigEndian.AppendUint16(append(b, 0x80|126), uint16(n))
	default:
		b = binary.BigEndian.AppendUint64(append(b, 0x80|127), uint64(n))
	}
	var key [4]byte
	rand.Read(key[:])
	b = append(b, key[:]...)
	for i, p := range payload {
		b = append(b, p^key[i%4])
	}
	_, err := c.conn.Write(b)
	return err
}

// A Frame is one of the server's messages on the socket: a poll's answer (Messages, Last,
// Epoch), the answer to a post (Posted) or a post refused (Error, Status).
type Frame struct {
	Messages []chatapi.Message `json:"messages"`
	Last     *uint64           `json:"last"`
	Epoch    string            `json:"epoch"`
	Posted   *Posted           `json:"posted"`
	Error    string            `json:"error"`
	Status   int               `json:"status"`
}

// Posted is the answer to a post: where the message went.
type Posted struct {
	ID    string `json:"id"`
	Seq   uint64 `json:"seq"`
	Time  string `json:"time"`
	Epoch string `json:"epoch"`
}

// ReadFrame reads the next frame.
func (c *Client) ReadFrame() (Frame, error) {
	var f Frame
	err := c.ReadJSON(&f)
	return f, err
}

// Answer reads the next frame, which must be a poll's answer of the given epoch whose messages
// follow the cursor with no gap (the chat's seqs are 1, 2, 3, ...) and whose last is the last
// one's seq (the cursor itself when there are none). It returns the messages and the new
// cursor.
func (c *Client) Answer(cursor uint64, epoch string) ([]chatapi.Message, uint64, error) {
	f, err := c.ReadFrame()
	if err != nil {
		return nil, cursor, err
	}
	if f.Last == nil || f.Messages == nil || f.Epoch != epoch {
		return nil, cursor, fmt.Errorf("frame %+v, want an answer of epoch %q", f, epoch)
	}
	for _, m := range f.Messages {
		if m.Seq != cursor+1 || len(m.ID) != 36 {
			return nil, cursor, fmt.Errorf("message %+v after cursor %d", m, cursor)
		}
		cursor = m.Seq
	}
	if *f.Last != cursor {
		return nil, cursor, fmt.Errorf("an answer with last %d after the messages up to %d", *f.Last, cursor)
	}
	return f.Messages, cursor, nil
}

// CatchUp reads the answers a socket starts with, up to the one with no messages, and returns
// the texts and the cursor.
func (c *Client) CatchUp(cursor uint64, epoch string) ([]string, uint64, error) {
	var texts []string
	for {
		msgs, last, err := c.Answer(cursor, epoch)
		if err != nil || len(msgs) == 0 {
			return texts, last, err
		}
		for _, m := range msgs {
			texts = append(texts, m.Text)
		}
		cursor = last
	}
}

// Receive reads answers until n messages have come after the cursor, and returns their texts and
// the new cursor; more than n is an error.
func (c *Client) Receive(cursor uint64, epoch string, n int) ([]string, uint64, error) {
	var texts []string
	for len(texts) < n {
		msgs, last, err := c.Answer(cursor, epoch)
		if err != nil {
			return texts, last, err
		}
		for _, m := range msgs {
			texts = append(texts, m.Text)
		}
		cursor = last
	}
	if len(texts) != n {
		return texts, cursor, fmt.Errorf("%d messages, want %d: %q", len(texts), n, texts)
	}
	return texts, cursor, nil
}
