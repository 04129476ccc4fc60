package nethttp

import (
	"bufio"
	"encoding/binary"
	"io"
	"net"
	"testing"
)

// h2raw is a byte-level HTTP/2 client (h2c with prior knowledge) for what net/http's own client
// cannot send: its Transport refuses the ":protocol" of an extended CONNECT (RFC 8441), which
// golang.org/x/net/http2's alone sends. It encodes requests as HPACK literals without indexing
// or Huffman coding, and of a response's field block decodes only :status, which the server
// always sends first (its other fields are left alone).
type h2raw struct {
	t       *testing.T
	nc      net.Conn
	br      *bufio.Reader
	streams map[uint32]*h2rawResp
	enabled bool // the server's SETTINGS had SETTINGS_ENABLE_CONNECT_PROTOCOL = 1
	settled bool // the server's SETTINGS arrived
}

type h2rawResp struct {
	status int
	body   []byte
	end    bool // END_STREAM received
	rst    bool // RST_STREAM received
}

// Frame types and flags (RFC 9113 §6).
const (
	rawData         = 0x0
	rawHeaders      = 0x1
	rawRSTStream    = 0x3
	rawSettings     = 0x4
	rawFlagEnd      = 0x1
	rawFlagAck      = 0x1
	rawFlagEndHeads = 0x4
	rawFlagPadded   = 0x8
	rawFlagPriority = 0x20
)

func dialH2Raw(t *testing.T, addr string) *h2raw {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	c := &h2raw{t: t, nc: nc, br: bufio.NewReader(nc), streams: map[uint32]*h2rawResp{}}
	c.write([]byte("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"))
	c.frame(rawSettings, 0, 0, nil)
	return c
}

func (c *h2raw) write(b []byte) {
	c.t.Helper()
	if _, err := c.nc.Write(b); err != nil {
		c.t.Fatalf("write: %v", err)
	}
}

// frame sends one frame.
func (c *h2raw) frame(typ, flags byte, id uint32, payload []byte) {
	c.t.Helper()
	b := make([]byte, 9, 9+len(payload))
	b[0], b[1], b[2] = byte(len(payload)>>16), byte(len(payload)>>8), byte(len(payload))
	b[3], b[4] = typ, flags
	binary.BigEndian.PutUint32(b[5:], id)
	c.write(append(b, payload...))
}

// request sends HEADERS for a request of name, value pairs on stream id.
func (c *h2raw) request(id uint32, end bool, pairs ...string) {
	c.t.Helper()
	var block []byte
	for i := 0; i+1 < len(pairs); i += 2 {
		block = append(block, 0x00) // a literal without indexing, its name a literal too
		for _, s := range pairs[i : i+2] {
			if len(s) >= 127 {
				c.t.Fatalf("field %q: longer than this client encodes", s)
			}
			block = append(append(block, byte(len(s))), s...)
		}
	}
	flags := byte(rawFlagEndHeads)
	if end {
		flags |= rawFlagEnd
	}
	c.frame(rawHeaders, flags, id, block)
}

// connect sends an extended CONNECT for WebSocket to path on stream id, once the server's
// SETTINGS have allowed it.
func (c *h2raw) connect(id uint32, path string) {
	c.t.Helper()
	c.until("the server's SETTINGS", func() bool { return c.settled })
	if !c.enabled {
		c.t.Fatal("the server's SETTINGS have no SETTINGS_ENABLE_CONNECT_PROTOCOL")
	}
	c.request(id, false, ":method", "CONNECT", ":protocol", "websocket", ":scheme", "http",
		":authority", "h", ":path", path, "sec-websocket-version", "13")
}

// read reads the next frame and records what it says; it reports false once the connection
// has closed.
func (c *h2raw) read() bool {
	c.t.Helper()
	var h [9]byte
	if _, err := io.ReadFull(c.br, h[:]); err != nil {
		return false
	}
	n := int(h[0])<<16 | int(h[1])<<8 | int(h[2])
	typ, flags, id := h[3], h[4], binary.BigEndian.Uint32(h[5:])&(1<<31-1)
	p := make([]byte, n)
	if _, err := io.ReadFull(c.br, p); err != nil {
		c.t.Fatalf("reading a frame's payload: %v", err)
	}
	s := c.streams[id]
	if s == nil && id != 0 {
		s = &h2rawResp{}
		c.streams[id] = s
	}
	switch typ {
	case rawSettings:
		if flags&rawFlagAck != 0 {
			break
		}
		for i := 0; i+6 <= len(p); i += 6 {
			if binary.BigEndian.Uint16(p[i:]) == 0x8 { // SETTINGS_ENABLE_CONNECT_PROTOCOL
				c.enabled = binary.BigEndian.Uint32(p[i+2:]) == 1
			}
		}
		c.settled = true
		c.frame(rawSettings, rawFlagAck, 0, nil)
	case rawHeaders:
		if flags&rawFlagPadded != 0 {
			p = p[1 : len(p)-int(p[0])]
		}
		if flags&rawFlagPriority != 0 {
			p = p[5:]
		}
		if st := decodeStatus(p); st >= 200 {
			s.status = st // a final status: interim ones are not kept
		}
	case rawData:
		if flags&rawFlagPadded != 0 {
			p = p[1 : len(p)-int(p[0])]
		}
		s.body = append(s.body, p...)
	case rawRSTStream:
		s.rst = true
	}
	if flags&rawFlagEnd != 0 && (typ == rawData || typ == rawHeaders) {
		s.end = true
	}
	return true
}

// until reads frames until cond holds, failing the test if the connection closes first.
func (c *h2raw) until(what string, cond func() bool) {
	c.t.Helper()
	for !cond() {
		if !c.read() {
			c.t.Fatalf("the connection closed before %s", what)
		}
	}
}

// response reads frames until stream id has ended (END_STREAM or RST_STREAM) and returns it.
func (c *h2raw) response(id uint32) *h2rawResp {
	c.t.Helper()
	c.until("the stream's end", func() bool { s := c.streams[id]; return s != nil && (s.end || s.rst) })
	return c.streams[id]
}

// decodeStatus decodes the :status that begins a response's field block (RFC 7541): one of the
// static table's (indexes 8 to 14), or a literal with :status's name index whose value is three
// digits, plain or Huffman-coded. It returns 0 for anything else.
func decodeStatus(block []byte) int {
	if len(block) == 0 {
		return 0
	}
	if i := block[0]; i >= 0x88 && i <= 0x8e {
		return [...]int{200, 204, 206, 304, 400, 404, 500}[i-0x88]
	}
	switch {
	case len(block) < 2 || block[1]&0x7f == 0x7f:
		return 0
	case block[0] == 0x08, block[0] == 0x18, block[0] == 0x48: // without, never, with indexing
	default:
		return 0
	}
	n := int(block[1] & 0x7f)
	if len(block) < 2+n {
		return 0
	}
	v := block[2 : 2+n]
	if block[1]&0x80 != 0 {
		v = huffmanDigits(v)
	}
	status := 0
	for _, d := range v {
		if d < '0' || d > '9' {
			return 0
		}
		status = status*10 + int(d-'0')
	}
	return status
}

// huffmanDigits decodes a Huffman-coded string of digits (RFC 7541 Appendix B: "0" to "2" have
// 5-bit codes 00000 to 00010, "3" to "9" the 6-bit codes 011001 to 011111), stopping at the
// padding of ones; anything else decodes as "x".
func huffmanDigits(b []byte) []byte {
	var out []byte
	var acc uint32
	bits := 0
	for _, x := range b {
		acc, bits = acc<<8|uint32(x), bits+8
		for bits >= 5 {
			if code := acc >> (bits - 5) & 0x1f; code <= 2 {
				out, bits = append(out, byte('0'+code)), bits-5
				continue
			}
			if bits < 6 {
				break
			}
			code := acc >> (bits - 6) & 0x3f
			switch {
			case code >= 0x19 && code <= 0x1f:
				out, bits = append(out, byte('3'+code-0x19)), bits-6
			case code == 0x3f:
				return out // the padding: the most significant bits of EOS, all ones
			default:
				return append(out, 'x')
			}
		}
		acc &= 1<<bits - 1
	}
	return out
}
