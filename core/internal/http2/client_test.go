package http2

import (
	"bufio"
	"io"
	"net"
	"strconv"
	"testing"

	"github.com/dwellhttp/dwell/core/internal/h2"
)

// h2client is a byte-level HTTP/2 client for core's tests, built on the frame layer the server
// uses (its appenders encode requests as well as responses; HPACK is symmetric): it sends exactly
// the frames a test names, and reads back exactly what the server sent.
type h2client struct {
	t   testing.TB
	nc  net.Conn
	br  *bufio.Reader
	dec *h2.Decoder

	streams map[uint32]*h2resp // what arrived on each stream
	goAway  *h2goAway          // the GOAWAY the server sent, if any
	closed  bool               // the server closed the connection
	window  int64              // connection window the server has granted past the default
	pings   [][8]byte          // PING acknowledgements received
	acks    int                // SETTINGS acknowledgements received
	// settings holds the server's SETTINGS, once received (nil before).
	settings map[h2.SettingID]uint32
}

type h2resp struct {
	status   int
	fields   map[string]string   // the last value of each field
	lists    map[string][]string // every value of each field, in order
	body     []byte
	end      bool       // END_STREAM received
	rst      bool       // RST_STREAM received
	code     h2.ErrCode // its code
	interims []int      // 1xx statuses, in order
}

type h2goAway struct {
	last uint32
	code h2.ErrCode
}

// dialH2 opens an h2c connection with prior knowledge and sends the preface with settings.
func dialH2(t testing.TB, addr string, settings ...h2.Setting) *h2client {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	c := &h2client{t: t, nc: nc, br: bufio.NewReader(nc), dec: h2.NewDecoder(4096), streams: map[uint32]*h2resp{}}
	b := append([]byte(h2.ClientPreface), h2.AppendSettings(nil, settings...)...)
	c.write(b)
	return c
}

func (c *h2client) write(b []byte) {
	c.t.Helper()
	if _, err := c.nc.Write(b); err != nil {
		c.t.Fatalf("write: %v", err)
	}
}

// flood sends b, a flood the server is to refuse: once it has seen enough it may close without
// reading the rest (see h2conn.goAway), so a write that fails then is what a flooding client
// meets. The GOAWAY sent before the close stays readable.
func (c *h2client) flood(b []byte) {
	c.nc.Write(b)
}

// request sends HEADERS (with END_HEADERS) for a request: pairs of names and values, pseudo-header
// fields included.
func (c *h2client) request(id uint32, end bool, pairs ...string) {
	c.t.Helper()
	c.write(h2.AppendHeaders(nil, id, end, encodeFields(pairs...), h2.MinMaxFrameSize))
}

// get sends a GET of path on stream id.
func (c *h2client) get(id uint32, path string) {
	c.t.Helper()
	c.request(id, true, ":method", "GET", ":scheme", "http", ":authority", "h", ":path", path)
}

func encodeFields(pairs ...string) []byte {
	var block []byte
	for i := 0; i+1 < len(pairs); i += 2 {
		block = h2.AppendField(block, []byte(pairs[i]), []byte(pairs[i+1]), false)
	}
	return block
}

func (c *h2client) data(id uint32, end bool, p []byte) {
	c.t.Helper()
	c.write(h2.AppendData(nil, id, end, p))
}

// frame reads the next frame and records what it says; it reports false once the server has
// closed the connection.
func (c *h2client) frame() (h2.Header, []byte, bool) {
	c.t.Helper()
	var hb [h2.HeaderLen]byte
	if _, err := io.ReadFull(c.br, hb[:]); err != nil {
		c.closed = true
		return h2.Header{}, nil, false
	}
	fh := h2.ParseHeader(hb[:])
	p := make([]byte, fh.Length)
	if _, err := io.ReadFull(c.br, p); err != nil {
		c.t.Fatalf("reading a %v frame's payload: %v", fh.Type, err)
	}
	s := c.streams[fh.StreamID]
	if s == nil && fh.StreamID != 0 {
		s = &h2resp{fields: map[string]string{}, lists: map[string][]string{}}
		c.streams[fh.StreamID] = s
	}
	switch fh.Type {
	case h2.TypeHeaders, h2.TypeContinuation:
		block := p
		if fh.Type == h2.TypeHeaders {
			block, _, _ = h2.Headers(fh, p)
		}
		status := 0
		err := c.dec.Decode(block, func(name, value []byte, _ bool) error {
			if string(name) == ":status" {
				status, _ = strconv.Atoi(string(value))
			} else {
				s.fields[string(name)] = string(value)
				s.lists[string(name)] = append(s.lists[string(name)], string(value))
			}
			return nil
		})
		if err != nil {
			c.t.Fatalf("decoding the response's fields: %v", err)
		}
		switch {
		case status >= 100 && status < 200:
			s.interims = append(s.interims, status)
		case status != 0:
			s.status = status
		}
	case h2.TypeData:
		d, _ := h2.Data(fh, p)
		s.body = append(s.body, d...)
	case h2.TypeRSTStream:
		s.rst, s.code = true, h2.RSTStream(p)
	case h2.TypeGoAway:
		last, code, _ := h2.GoAway(p)
		c.goAway = &h2goAway{last, code}
	case h2.TypePing:
		if fh.Flags.Has(h2.FlagAck) {
			c.pings = append(c.pings, h2.Ping(p))
		}
	case h2.TypeSettings:
		if fh.Flags.Has(h2.FlagAck) {
			c.acks++
			break
		}
		if c.settings == nil {
			c.settings = map[h2.SettingID]uint32{}
		}
		h2.Settings(p, func(st h2.Setting) error { c.settings[st.ID] = st.Value; return nil })
	case h2.TypeWindowUpdate:
		if fh.StreamID == 0 {
			inc, _ := h2.WindowUpdate(fh, p)
			c.window += int64(inc)
		}
	}
	if fh.Flags.Has(h2.FlagEndStream) && (fh.Type == h2.TypeData || fh.Type == h2.TypeHeaders) {
		s.end = true
	}
	return fh, p, true
}

// until reads frames until cond holds, failing the test if the connection closes first.
func (c *h2client) until(what string, cond func() bool) {
	c.t.Helper()
	for !cond() {
		if _, _, ok := c.frame(); !ok {
			c.t.Fatalf("the connection closed before %s", what)
		}
	}
}

// response reads frames until stream id has ended (END_STREAM or RST_STREAM) and returns it.
func (c *h2client) response(id uint32) *h2resp {
	c.t.Helper()
	c.until("stream "+strconv.Itoa(int(id))+" ended", func() bool {
		s := c.streams[id]
		return s != nil && (s.end || s.rst)
	})
	return c.streams[id]
}

// connError reads frames until the server has sent GOAWAY and closed, and returns GOAWAY's code.
func (c *h2client) connError() h2.ErrCode {
	c.t.Helper()
	for {
		if _, _, ok := c.frame(); !ok {
			break
		}
	}
	if c.goAway == nil {
		c.t.Fatal("the connection closed without GOAWAY")
	}
	return c.goAway.code
}
