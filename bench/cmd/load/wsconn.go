package main

import (
	"bufio"
	"bytes"
	"compress/flate"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// The WebSocket client of the ws-* modes, written from RFC 6455 and RFC 7692 alone so that it
// costs its core as little as it can: the opening handshake over a net.Conn, then frames built
// once and sent as they are (a fixed mask key: servers may not tell), and the server's frames
// parsed in place. After the handshake the epoll modes take the socket from package net
// (detach) and serve it from one loop of their own (wspoll.go).

// wsKey is the Sec-WebSocket-Key of every handshake (RFC 6455 §1.3's example; servers only
// check its form), wsAccept its answer.
const (
	wsKey    = "dGhlIHNhbXBsZSBub25jZQ=="
	wsAccept = "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="
)

// deflateOffer is the permessage-deflate offer of the deflate figures: a browser's, which
// leaves context takeover to the server (RFC 7692 §7.1).
const deflateOffer = "permessage-deflate; client_max_window_bits"

// Opcodes (RFC 6455 §5.2).
const (
	opText   = 0x1
	opBinary = 0x2
	opClose  = 0x8
	opPing   = 0x9
	opPong   = 0xa
)

// maskKey masks every frame the client sends.
var maskKey = [4]byte{0x5a, 0x1b, 0xc3, 0x7e}

// wsDialed is a connection after its handshake: the net.Conn, the bytes read past the 101's
// head (frames the server sent at once), and the extension the server agreed to.
type wsDialed struct {
	c         net.Conn
	br        *bufio.Reader
	extension string
}

// wsDial dials addr and upgrades at path, offering permessage-deflate when deflate is set; a
// positive rcvbuf sets the socket's receive buffer before it connects (a client that stops
// reading then holds little in its own kernel, and the server's output waits sooner).
func wsDial(d *dialer, host, path string, deflate bool, rcvbuf int) (*wsDialed, error) {
	nd := net.Dialer{Timeout: d.timeout}
	if len(d.sources) > 0 {
		nd.LocalAddr = d.sources[d.next.Add(1)%uint64(len(d.sources))]
	}
	if rcvbuf > 0 {
		nd.Control = func(_, _ string, rc syscall.RawConn) error {
			var serr error
			err := rc.Control(func(fd uintptr) {
				serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, rcvbuf)
			})
			return errors.Join(err, serr)
		}
	}
	c, err := nd.Dial("tcp", d.addr)
	if err != nil {
		return nil, err
	}
	c.SetDeadline(time.Now().Add(10 * time.Second))
	w := &wsDialed{c: c, br: bufio.NewReaderSize(c, 2048)}
	if err := w.upgrade(host, path, deflate); err != nil {
		c.Close()
		return nil, err
	}
	c.SetDeadline(time.Time{})
	return w, nil
}

// upgrade sends the opening handshake on w's connection and reads the answer.
func (w *wsDialed) upgrade(host, path string, deflate bool) error {
	req := "GET " + path + " HTTP/1.1\r\nHost: " + host + "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
		"Sec-WebSocket-Key: " + wsKey + "\r\nSec-WebSocket-Version: 13\r\n"
	if deflate {
		req += "Sec-WebSocket-Extensions: " + deflateOffer + "\r\n"
	}
	if _, err := io.WriteString(w.c, req+"\r\n"); err != nil {
		return err
	}
	return w.readHandshake(deflate)
}

// closeFd closes a detached socket.
func closeFd(fd int) { syscall.Close(fd) }

// readHandshake reads and checks the server's answer to the upgrade.
func (w *wsDialed) readHandshake(deflate bool) error {
	line, err := w.br.ReadString('\n')
	if err != nil {
		return fmt.Errorf("handshake: %w", err)
	}
	if f := strings.Fields(line); len(f) < 2 || f[1] != "101" {
		return fmt.Errorf("handshake: answered %q", strings.TrimSpace(line))
	}
	accepted := false
	for {
		line, err := w.br.ReadString('\n')
		if err != nil {
			return fmt.Errorf("handshake: %w", err)
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			break
		}
		name, value, _ := strings.Cut(line, ":")
		value = strings.TrimSpace(value)
		switch strings.ToLower(name) {
		case "sec-websocket-accept":
			accepted = value == wsAccept
		case "sec-websocket-extensions":
			w.extension = value
		}
	}
	if !accepted {
		return errors.New("handshake: no valid Sec-WebSocket-Accept")
	}
	if deflate && !strings.HasPrefix(w.extension, "permessage-deflate") {
		return fmt.Errorf("handshake: the server did not accept permessage-deflate (extensions %q)", w.extension)
	}
	return nil
}

// detach takes the socket from package net: it returns a duplicate of its descriptor
// (non-blocking, as net left it) and closes the net.Conn, so that the Go runtime's poller
// forgets it, and the bytes already read past the handshake.
func (w *wsDialed) detach() (int, []byte, error) {
	rc, err := w.c.(*net.TCPConn).SyscallConn()
	if err != nil {
		return -1, nil, err
	}
	fd := -1
	var derr error
	if err := rc.Control(func(f uintptr) { fd, derr = syscall.Dup(int(f)) }); err != nil {
		return -1, nil, err
	}
	if derr != nil {
		return -1, nil, derr
	}
	syscall.CloseOnExec(fd)
	rest, _ := w.br.Peek(w.br.Buffered())
	rest = bytes.Clone(rest)
	w.c.Close()
	return fd, rest, nil
}

// clientFrame builds one final, masked frame.
func clientFrame(op byte, rsv1 bool, payload []byte) []byte {
	b0 := 0x80 | op
	if rsv1 {
		b0 |= 0x40
	}
	b := []byte{b0}
	switch n := len(payload); {
	case n < 126:
		b = append(b, 0x80|byte(n))
	case n < 1<<16:
		b = append(b, 0x80|126, byte(n>>8), byte(n))
	default:
		b = append(b, 0x80|127)
		b = binary.BigEndian.AppendUint64(b, uint64(n))
	}
	b = append(b, maskKey[:]...)
	h := len(b)
	b = append(b, payload...)
	for i := range payload {
		b[h+i] ^= maskKey[i&3]
	}
	return b
}

// A serverFrame is a parsed frame header of the server's.
type serverFrame struct {
	fin, rsv1 bool
	op        byte
	length    int
}

var errMasked = errors.New("ws: a server frame is masked")

// parseFrame parses the frame header at the start of b: it returns the header and its size, or
// 0 when more bytes are needed.
func parseFrame(b []byte) (serverFrame, int, error) {
	if len(b) < 2 {
		return serverFrame{}, 0, nil
	}
	f := serverFrame{fin: b[0]&0x80 != 0, rsv1: b[0]&0x40 != 0, op: b[0] & 0x0f}
	if b[1]&0x80 != 0 {
		return f, 0, errMasked
	}
	n, h := int(b[1]&0x7f), 2
	switch n {
	case 126:
		if len(b) < 4 {
			return f, 0, nil
		}
		n, h = int(binary.BigEndian.Uint16(b[2:4])), 4
	case 127:
		if len(b) < 10 {
			return f, 0, nil
		}
		v := binary.BigEndian.Uint64(b[2:10])
		if v > 1<<30 {
			return f, 0, fmt.Errorf("ws: a %d-byte frame", v)
		}
		n, h = int(v), 10
	}
	f.length = n
	return f, h, nil
}

// readFrame reads one whole frame from br (the idle mode's blocking reads).
func readFrame(br *bufio.Reader) (serverFrame, []byte, error) {
	var head [10]byte
	if _, err := io.ReadFull(br, head[:2]); err != nil {
		return serverFrame{}, nil, err
	}
	need := 0
	switch head[1] & 0x7f {
	case 126:
		need = 2
	case 127:
		need = 8
	}
	if _, err := io.ReadFull(br, head[2:2+need]); err != nil {
		return serverFrame{}, nil, err
	}
	f, _, err := parseFrame(head[:2+need])
	if err != nil {
		return f, nil, err
	}
	p := make([]byte, f.length)
	_, err = io.ReadFull(br, p)
	return f, p, err
}

// readMessage reads one data message from br, whole: its fragments joined, control frames
// skipped. The header returned is the first frame's, marked final.
func readMessage(br *bufio.Reader) (serverFrame, []byte, error) {
	var first serverFrame
	var msg []byte
	for {
		f, p, err := readFrame(br)
		if err != nil {
			return f, nil, err
		}
		switch {
		case f.op >= opClose:
			if f.op == opClose {
				return f, nil, errors.New("ws: the server closed the connection")
			}
			continue // ping or pong
		case f.op != 0:
			first = f
		case first.op == 0:
			return f, nil, errors.New("ws: a continuation without a message")
		}
		msg = append(msg, p...)
		if f.fin {
			first.fin = true
			return first, msg, nil
		}
	}
}

// deflateTail is what a sender strips from the end of a compressed message (RFC 7692 §7.2.1).
const deflateTail = "\x00\x00\xff\xff"

// compressMessage compresses one message on its own (no context: valid whatever was
// negotiated), at flate's default level, as browsers do.
func compressMessage(p []byte) []byte {
	var b bytes.Buffer
	w, _ := flate.NewWriter(&b, flate.DefaultCompression)
	w.Write(p)
	w.Flush()
	return bytes.TrimSuffix(b.Bytes(), []byte(deflateTail))
}

// inflateMessage inflates a compressed message whose sender did not carry its window over from
// an earlier one (the first message of a connection always qualifies).
func inflateMessage(p []byte) ([]byte, error) {
	r := flate.NewReader(io.MultiReader(bytes.NewReader(p), strings.NewReader(deflateTail)))
	defer r.Close()
	out, err := io.ReadAll(r)
	if errors.Is(err, io.ErrUnexpectedEOF) {
		err = nil // the stream ends at a sync flush, not at a final block
	}
	return out, err
}

// A wsMessage is what a mode sends: the message, and the frame that carries it.
type wsMessage struct {
	data       []byte
	op         byte
	compressed bool
	frame      []byte
}

// newMessage prepares the message of the echo modes: size bytes, binary, or, with deflate, a
// JSON text of size bytes, compressed.
func newMessage(size int, deflate bool) *wsMessage {
	if deflate {
		data := jsonMessage(size)
		z := compressMessage(data)
		return &wsMessage{data: data, op: opText, compressed: true, frame: clientFrame(opText, true, z)}
	}
	data := make([]byte, size)
	x := uint32(2463534242)
	for i := range data {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		data[i] = byte(x)
	}
	return &wsMessage{data: data, op: opBinary, frame: clientFrame(opBinary, false, data)}
}

// check reports whether a data frame is the echo of m, inflating it when it is compressed
// (inflate false trusts a compressed echo of the right type, to spare the client's core).
func (m *wsMessage) check(f serverFrame, p []byte, inflate bool) error {
	if f.op != m.op || !f.fin {
		return fmt.Errorf("ws: echo is opcode %d fin %v, want %d", f.op, f.fin, m.op)
	}
	if f.rsv1 {
		if !inflate {
			return nil
		}
		out, err := inflateMessage(p)
		if err != nil {
			return fmt.Errorf("ws: echo does not inflate: %w", err)
		}
		p = out
	}
	if !bytes.Equal(p, m.data) {
		return fmt.Errorf("ws: echo of %d bytes differs from the %d sent", len(p), len(m.data))
	}
	return nil
}

// jsonMessage is a JSON document of exactly size bytes: the kind of update a WebSocket
// application sends, a list of records with repeated keys, which compresses as such text does.
func jsonMessage(size int) []byte {
	b := []byte(`{"type":"update","channel":"orders","items":[`)
	for i := 0; ; i++ {
		item := `{"id":` + strconv.Itoa(1000+i) + `,"sku":"SKU-` + strconv.Itoa(7*i+13) +
			`","name":"item number ` + strconv.Itoa(i) + `","price":` + strconv.Itoa(199+37*i) +
			`.95,"qty":` + strconv.Itoa(i%7+1) + `,"tags":["new","sale"],"active":true}`
		if len(b)+len(item)+len(`,],"pad":""}`) > size {
			break
		}
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, item...)
	}
	b = append(b, `],"pad":"`...)
	for len(b) < size-2 {
		b = append(b, 'x')
	}
	return append(b, `"}`...)
}
