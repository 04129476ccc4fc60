package interop

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"crypto/sha1"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/dwellhttp/dwell/core/coretest"
)

// The conformance suite's client, written from RFC 6455 and RFC 7692 alone (dwell's internal
// packages are not importable from here, and a client sharing the server's code would share
// its mistakes): it frames exactly what a case says, rules broken included, writes it in one
// piece, a frame or an octet at a time, and checks every frame the server sends against what
// the RFC allows a server to send.

// Opcodes (RFC 6455 §5.2).
const (
	opCont   byte = 0x0
	opText   byte = 0x1
	opBinary byte = 0x2
	opClose  byte = 0x8
	opPing   byte = 0x9
	opPong   byte = 0xa
)

// Reserved bits as wsFrame.rsv holds them.
const (
	rsv1 byte = 4
	rsv2 byte = 2
	rsv3 byte = 1
)

// A wsFrame is a frame the client sends, as the case wrote it.
type wsFrame struct {
	fin      bool
	rsv      byte // RSV1 as 4, RSV2 as 2, RSV3 as 1
	op       byte
	payload  []byte
	unmasked bool
}

// Final frames of each kind.
func text(s string) wsFrame { return wsFrame{fin: true, op: opText, payload: []byte(s)} }
func bin(b []byte) wsFrame  { return wsFrame{fin: true, op: opBinary, payload: b} }
func ping(s string) wsFrame { return wsFrame{fin: true, op: opPing, payload: []byte(s)} }
func pong(s string) wsFrame { return wsFrame{fin: true, op: opPong, payload: []byte(s)} }

// frag is a fragment: a first frame (op Text or Binary) or a continuation (opCont).
func frag(op byte, s string, fin bool) wsFrame {
	return wsFrame{fin: fin, op: op, payload: []byte(s)}
}

// closeFrame is a close frame with code and reason; code 0 sends an empty payload.
func closeFrame(code uint16, reason string) wsFrame {
	f := wsFrame{fin: true, op: opClose}
	if code != 0 {
		f.payload = append(binary.BigEndian.AppendUint16(nil, code), reason...)
	}
	return f
}

// encode returns the frame's bytes, masked with key unless f.unmasked.
func (f wsFrame) encode(key [4]byte) []byte {
	b0 := f.rsv<<4 | f.op&0x0f
	if f.fin {
		b0 |= 0x80
	}
	var mbit byte = 0x80
	if f.unmasked {
		mbit = 0
	}
	b := make([]byte, 0, 14+len(f.payload))
	switch n := len(f.payload); {
	case n < 126:
		b = append(b, b0, mbit|byte(n))
	case n < 1<<16:
		b = binary.BigEndian.AppendUint16(append(b, b0, mbit|126), uint16(n))
	default:
		b = binary.BigEndian.AppendUint64(append(b, b0, mbit|127), uint64(n))
	}
	if f.unmasked {
		return append(b, f.payload...)
	}
	b = append(b, key[:]...)
	h := len(b)
	b = append(b, f.payload...)
	maskBytes(key, b[h:])
	return b
}

// maskBytes masks p with key (§5.3), eight bytes at a time where it can: the big messages are
// 16 MiB.
func maskBytes(key [4]byte, p []byte) {
	k := uint64(binary.LittleEndian.Uint32(key[:]))
	k |= k << 32
	i := 0
	for ; i+8 <= len(p); i += 8 {
		binary.LittleEndian.PutUint64(p[i:], binary.LittleEndian.Uint64(p[i:])^k)
	}
	for ; i < len(p); i++ {
		p[i] ^= key[i%4]
	}
}

// describe is a frame in a failure's report: its header bytes in hex, then at most 60 bytes of
// its (unmasked) payload.
func describe(header []byte, payload []byte) string {
	return fmt.Sprintf("[% x] %.60q (%d bytes)", header, payload, len(payload))
}

// A rawClient is one connection of the suite.
type rawClient struct {
	t    *testing.T
	conn *net.TCPConn
	r    *bufio.Reader
	resp *http.Response
	seed uint32 // the next masking key's source: every frame has its own (§5.3)

	pmd *pmdState // permessage-deflate, when the handshake agreed it

	msgOp  byte // the server's message in progress: its opcode, 0 between messages
	msgRSV bool // its first frame had RSV1
	msg    []byte

	sent, got []string // the last frames each way, for failure reports
}

// dial connects to the server and upgrades /ws with extra header lines (an offer of
// Sec-WebSocket-Extensions among them, perhaps), failing the test unless the server answers
// as §4.2.2 says: 101, Upgrade and Connection, the Sec-WebSocket-Accept of the key sent, and a
// permessage-deflate response that accepts one of the offers as RFC 7692 allows, or none.
func (s *wsServer) dial(t *testing.T, extra ...string) *rawClient {
	t.Helper()
	c, resp := handshakeRaw(t, s.addr, "GET", extra...)
	if resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("upgrade answered %d %s", resp.StatusCode, resp.Status)
	}
	if !strings.EqualFold(resp.Header.Get("Upgrade"), "websocket") || !headerHasToken(resp.Header, "Connection", "upgrade") {
		t.Fatalf("101 with Upgrade %q, Connection %q", resp.Header.Get("Upgrade"), resp.Header.Get("Connection"))
	}
	c.pmd = negotiated(t, s, extra, resp.Header.Values("Sec-WebSocket-Extensions"))
	return c
}

// handshakeRaw sends an opening handshake for /ws with method and a fresh key, and reads the
// answer, checking Sec-WebSocket-Accept on a 101. An extra line replaces the handshake's own
// field of its name (Host, Upgrade, Connection, Sec-WebSocket-Key, Sec-WebSocket-Version), or
// removes it when its value is empty; the others are added.
func handshakeRaw(t *testing.T, addr, method string, extra ...string) (*rawClient, *http.Response) {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	var k [16]byte
	rand.Read(k[:])
	c := &rawClient{t: t, conn: nc.(*net.TCPConn), r: bufio.NewReaderSize(nc, 64<<10), seed: binary.BigEndian.Uint32(k[:])}
	fields := [][2]string{{"Host", addr}, {"Upgrade", "websocket"}, {"Connection", "Upgrade"},
		{"Sec-WebSocket-Key", base64.StdEncoding.EncodeToString(k[:])}, {"Sec-WebSocket-Version", "13"}}
	for _, e := range extra {
		name, value, _ := strings.Cut(e, ":")
		value = strings.TrimSpace(value)
		i := 0
		for i < 5 && !strings.EqualFold(fields[i][0], name) {
			i++
		}
		if i < 5 {
			fields[i][1] = value
		} else {
			fields = append(fields, [2]string{name, value})
		}
	}
	var req strings.Builder
	fmt.Fprintf(&req, "%s /ws HTTP/1.1\r\n", method)
	for _, f := range fields {
		if f[1] != "" {
			fmt.Fprintf(&req, "%s: %s\r\n", f[0], f[1])
		}
	}
	req.WriteString("\r\n")
	c.write([]byte(req.String()))
	c.deadline()
	resp, err := http.ReadResponse(c.r, &http.Request{Method: method})
	if err != nil {
		t.Fatalf("reading the handshake's answer: %v", err)
	}
	c.resp = resp
	if resp.StatusCode == http.StatusSwitchingProtocols {
		sum := sha1.Sum([]byte(fields[3][1] + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"))
		if want := base64.StdEncoding.EncodeToString(sum[:]); resp.Header.Get("Sec-WebSocket-Accept") != want {
			t.Fatalf("Sec-WebSocket-Accept %q, want %q (§4.2.2)", resp.Header.Get("Sec-WebSocket-Accept"), want)
		}
	}
	return c, resp
}

// headerHasToken reports whether a field of h's comma-separated lists has token.
func headerHasToken(h http.Header, name, token string) bool {
	for _, v := range h.Values(name) {
		for t := range strings.SplitSeq(v, ",") {
			if strings.EqualFold(strings.TrimSpace(t), token) {
				return true
			}
		}
	}
	return false
}

// deadline gives the next read or write Patience to make progress: a hang fails the test, a
// slow machine does not.
func (c *rawClient) deadline() { c.conn.SetDeadline(time.Now().Add(coretest.Patience)) }

// fatalf fails the test with the last frames of both ways, so that a failure shows its bytes.
func (c *rawClient) fatalf(format string, args ...any) {
	c.t.Helper()
	c.t.Fatalf(format+"\n  last sent: %s\n  last received: %s", append(args, strings.Join(c.sent, " | "), strings.Join(c.got, " | "))...)
}

// note keeps a frame's description in a report's list.
func note(list *[]string, s string) {
	if *list = append(*list, s); len(*list) > 4 {
		*list = (*list)[1:]
	}
}

// nextKey returns a fresh masking key.
func (c *rawClient) nextKey() [4]byte {
	c.seed = c.seed*1664525 + 1013904223
	var k [4]byte
	binary.BigEndian.PutUint32(k[:], c.seed)
	return k
}

// encode returns the frames' bytes, noting them for reports.
func (c *rawClient) encode(frames ...wsFrame) [][]byte {
	out := make([][]byte, len(frames))
	for i, f := range frames {
		out[i] = f.encode(c.nextKey())
		note(&c.sent, describe(out[i][:len(out[i])-len(f.payload)], f.payload))
	}
	return out
}

// write writes b, a megabyte at a time so that the deadline is one of progress.
func (c *rawClient) write(b []byte) {
	c.t.Helper()
	for len(b) > 0 {
		n := min(len(b), 1<<20)
		c.deadline()
		if _, err := c.conn.Write(b[:n]); err != nil {
			c.fatalf("write: %v", err)
		}
		b = b[n:]
	}
}

// send writes the frames in one piece (Autobahn's "in one chop").
func (c *rawClient) send(frames ...wsFrame) {
	c.t.Helper()
	c.write(bytes.Join(c.encode(frames...), nil))
}

// sendEach writes the frames one write each, without delay (Nagle's off): "per frame chops".
func (c *rawClient) sendEach(frames ...wsFrame) {
	c.t.Helper()
	c.conn.SetNoDelay(true)
	for _, b := range c.encode(frames...) {
		c.write(b)
	}
}

// sendChops writes the frames' bytes chop bytes per write: "in octets" with chop 1.
func (c *rawClient) sendChops(chop int, frames ...wsFrame) {
	c.t.Helper()
	c.conn.SetNoDelay(true)
	b := bytes.Join(c.encode(frames...), nil)
	for i := 0; i < len(b); i += chop {
		c.write(b[i:min(i+chop, len(b))])
	}
}

// A wsEvent is what the server sent: a whole message (reassembled, inflated), or a control
// frame.
type wsEvent struct {
	op         byte
	data       []byte // the message, or the control frame's payload
	code       uint16 // a close frame's code, 0 for none
	compressed bool   // the message came with RSV1
}

// readFrame reads the server's next frame, failing the test on one that RFC 6455 forbids a
// server to send.
func (c *rawClient) readFrame() (fin bool, rsv, op byte, payload []byte) {
	c.t.Helper()
	var h [14]byte
	c.deadline()
	if _, err := io.ReadFull(c.r, h[:2]); err != nil {
		c.fatalf("reading a frame: %v", err)
	}
	n, hn := uint64(h[1]&0x7f), 2
	switch n {
	case 126:
		hn = 4
	case 127:
		hn = 10
	}
	if _, err := io.ReadFull(c.r, h[2:hn]); err != nil {
		c.fatalf("reading a frame header: %v", err)
	}
	switch n {
	case 126:
		n = uint64(binary.BigEndian.Uint16(h[2:]))
	case 127:
		n = binary.BigEndian.Uint64(h[2:])
	}
	fin, rsv, op = h[0]&0x80 != 0, h[0]>>4&7, h[0]&0x0f
	if h[1]&0x80 != 0 {
		c.fatalf("the server masked a frame [% x] (§5.1)", h[:hn])
	}
	if n > 64<<20 {
		c.fatalf("a frame of %d bytes [% x]", n, h[:hn])
	}
	payload = make([]byte, n)
	for off := 0; off < len(payload); {
		c.deadline()
		k, err := io.ReadFull(c.r, payload[off:min(off+1<<20, len(payload))])
		if err != nil {
			c.fatalf("reading a frame's payload after %d of %d bytes: %v", off+k, n, err)
		}
		off += k
	}
	note(&c.got, describe(h[:hn], payload))
	switch {
	case op >= 3 && op <= 7 || op >= 0xb:
		c.fatalf("a frame with the reserved opcode %#x", op)
	case op >= 8 && (!fin || n > 125):
		c.fatalf("a control frame fragmented or over 125 bytes (§5.5)")
	case rsv&(rsv2|rsv3) != 0:
		c.fatalf("a frame with RSV2 or RSV3, which no extension agreed defines (§5.2)")
	case rsv&rsv1 != 0 && (c.pmd == nil || op == opCont || op >= 8):
		c.fatalf("RSV1 where no compression allows it (RFC 7692 §6)")
	}
	return fin, rsv, op, payload
}

// next returns the server's next message or control frame, checking that the rules of
// fragmentation (§5.4), of text (§8.1) and of close frames (§5.5.1, §7.4) hold for what it
// sends.
func (c *rawClient) next() wsEvent {
	c.t.Helper()
	for {
		fin, rsv, op, p := c.readFrame()
		if op >= 8 {
			ev := wsEvent{op: op, data: p}
			if op == opClose {
				ev.code = c.checkClose(p)
			}
			return ev
		}
		switch {
		case op == opCont && c.msgOp == 0:
			c.fatalf("a continuation frame with no message to continue (§5.4)")
		case op != opCont && c.msgOp != 0:
			c.fatalf("a new message inside a fragmented one (§5.4)")
		case op != opCont:
			c.msgOp, c.msgRSV, c.msg = op, rsv&rsv1 != 0, nil
		}
		c.msg = append(c.msg, p...)
		if !fin {
			continue
		}
		ev := wsEvent{op: c.msgOp, data: c.msg, compressed: c.msgRSV}
		c.msgOp, c.msg = 0, nil
		if ev.compressed {
			ev.data = c.pmd.inflate(c, ev.data)
		}
		if ev.op == opText && !utf8.Valid(ev.data) {
			c.fatalf("the server sent text that is not UTF-8 (§8.1)")
		}
		return ev
	}
}

// checkClose returns a close frame's code, failing the test on a payload the server must not
// send.
func (c *rawClient) checkClose(p []byte) uint16 {
	c.t.Helper()
	if len(p) == 0 {
		return 0
	}
	if len(p) == 1 {
		c.fatalf("a close frame with a 1-byte payload (§5.5.1)")
	}
	code := binary.BigEndian.Uint16(p)
	if !validCloseCode(code) || !utf8.Valid(p[2:]) {
		c.fatalf("a close frame with code %d, reason %.60q (§7.4)", code, p[2:])
	}
	return code
}

// validCloseCode reports whether an endpoint may send code (§7.4.1, §7.4.2, and 1012-1014 of
// the IANA registry).
func validCloseCode(code uint16) bool {
	return code >= 1000 && code <= 1003 || code >= 1007 && code <= 1014 || code >= 3000 && code <= 4999
}

// expectMessage reads the next event, which must be the message op with payload want.
func (c *rawClient) expectMessage(op byte, want []byte) {
	c.t.Helper()
	ev := c.next()
	if ev.op != op || !bytes.Equal(ev.data, want) {
		c.fatalf("got opcode %#x %.60q (%d bytes), want opcode %#x %.60q (%d bytes)", ev.op, ev.data, len(ev.data), op, want, len(want))
	}
}

// expectPong reads the next event, which must be a pong with payload want.
func (c *rawClient) expectPong(want string) {
	c.t.Helper()
	c.expectMessage(opPong, []byte(want))
}

// expectClose reads the next event, which must be a close frame with one of codes (0 for an
// empty payload), and then the end of the TCP connection: nothing may follow a close frame
// (§5.5.1), and the server closes the connection first (§7.1.1).
func (c *rawClient) expectClose(codes ...uint16) {
	c.t.Helper()
	ev := c.next()
	if ev.op != opClose {
		c.fatalf("got opcode %#x %.60q (%d bytes), want a close frame with %v", ev.op, ev.data, len(ev.data), codes)
	}
	ok := false
	for _, code := range codes {
		ok = ok || ev.code == code
	}
	if !ok {
		c.fatalf("close frame with code %d %.60q, want %v", ev.code, ev.data, codes)
	}
	c.expectEOF()
}

// expectEOF checks that the server has closed the connection, with nothing more sent.
func (c *rawClient) expectEOF() {
	c.t.Helper()
	c.deadline()
	var b [1]byte
	n, err := c.r.Read(b[:])
	switch {
	case n > 0:
		c.fatalf("a byte %#x after the close frame, where the connection should end", b[0])
	case errors.Is(err, io.EOF), errors.Is(err, syscall.ECONNRESET):
	default:
		c.fatalf("after the close frame: %v, want the end of the connection", err)
	}
	c.conn.Close() // as a client does: the server, lingering over the client's last bytes, sees the end
}

// closeNormally runs the close handshake from the client's side: nothing else may come before
// the server's answer, which echoes the code (§5.5.1).
func (c *rawClient) closeNormally() {
	c.t.Helper()
	c.send(closeFrame(1000, ""))
	c.expectClose(1000)
}

// failsWith sends the frames in one piece and expects the server to fail the connection with
// code: a close frame, then the end of the TCP connection (§7.1.7).
func (c *rawClient) failsWith(code uint16, frames ...wsFrame) {
	c.t.Helper()
	c.send(frames...)
	c.expectClose(code)
}
