package http2

import (
	"io"
	"testing"

	"github.com/dwellhttp/dwell/core/internal/h2"
	"github.com/dwellhttp/dwell/core/internal/serve"
)

// A stream's error never costs the connection its state: the frames behind the one that was
// the error are still read, and the field blocks of refused streams still decoded, so that the
// HPACK table stays the client's.

// echoFieldHandler answers with the value of the request's X-A field.
func echoFieldHandler(c *serve.Ctx) {
	c.WriteString("x-a=" + c.Header("X-A"))
}

// indexedField is a literal field with incremental indexing and a new name (RFC 7541 §6.2.1):
// the decoder adds it to its dynamic table, where the next field block may refer to it. The
// name and value are shorter than 127 bytes, and not Huffman-coded.
func indexedField(name, value string) []byte {
	b := append([]byte{0x40, byte(len(name))}, name...)
	b = append(b, byte(len(value)))
	return append(b, value...)
}

// firstDynamic refers to the newest entry of the dynamic table: index 62 (RFC 7541 §2.3.3).
var firstDynamic = []byte{0x80 | 62}

// getBlock is the field block of a GET of path, with extra fields after it.
func getBlock(path string, extra ...[]byte) []byte {
	b := encodeFields(":method", "GET", ":scheme", "http", ":authority", "h", ":path", path)
	for _, e := range extra {
		b = append(b, e...)
	}
	return b
}

// selfDependent is a HEADERS frame on stream id that depends on itself, carrying frag; end
// sets END_HEADERS.
func selfDependent(id uint32, frag []byte, end bool) []byte {
	fl := h2.FlagPriority | h2.FlagEndStream
	if end {
		fl |= h2.FlagEndHeaders
	}
	b := h2.AppendHeader(nil, h2.Header{Length: uint32(5 + len(frag)), Type: h2.TypeHeaders, Flags: fl, StreamID: id})
	b = append(b, byte(id>>24), byte(id>>16), byte(id>>8), byte(id), 15)
	return append(b, frag...)
}

func TestH2StreamErrorKeepsState(t *testing.T) {
	for _, tc := range []struct {
		name string
		// send writes what makes stream 1 the error, and stream 3's GET behind it in the same
		// write; stream 3's block refers to the dynamic table's newest entry, x-a: one, which
		// stream 1's block added (or, when the stream 1 block added none, names it in full).
		send func(c *h2client)
		code h2.ErrCode
	}{
		{"PRIORITY of 4 bytes", func(c *h2client) {
			b := h2.AppendHeader(nil, h2.Header{Length: 4, Type: h2.TypePriority, StreamID: 1})
			b = append(b, 0, 0, 0, 0)
			b = h2.AppendHeaders(b, 3, true, getBlock("/", indexedField("x-a", "one")), h2.MinMaxFrameSize)
			c.write(b)
		}, h2.FrameSizeError},
		{"PRIORITY of 6 bytes", func(c *h2client) {
			b := h2.AppendHeader(nil, h2.Header{Length: 6, Type: h2.TypePriority, StreamID: 1})
			b = append(b, 0, 0, 0, 0, 15, 0)
			b = h2.AppendHeaders(b, 3, true, getBlock("/", indexedField("x-a", "one")), h2.MinMaxFrameSize)
			c.write(b)
		}, h2.FrameSizeError},
		{"HEADERS that depends on itself", func(c *h2client) {
			b := selfDependent(1, getBlock("/", indexedField("x-a", "one")), true)
			b = h2.AppendHeaders(b, 3, true, getBlock("/", firstDynamic), h2.MinMaxFrameSize)
			c.write(b)
		}, h2.ProtocolError},
		{"HEADERS that depends on itself, with a CONTINUATION", func(c *h2client) {
			block := getBlock("/", indexedField("x-a", "one"))
			b := selfDependent(1, block[:3], false)
			b = h2.AppendHeader(b, h2.Header{Length: uint32(len(block) - 3), Type: h2.TypeContinuation, Flags: h2.FlagEndHeaders, StreamID: 1})
			b = append(b, block[3:]...)
			b = h2.AppendHeaders(b, 3, true, getBlock("/", firstDynamic), h2.MinMaxFrameSize)
			c.write(b)
		}, h2.ProtocolError},
		{"trailers without END_STREAM", func(c *h2client) {
			c.request(1, false, ":method", "POST", ":scheme", "http", ":authority", "h", ":path", "/")
			b := h2.AppendHeaders(nil, 1, false, indexedField("x-a", "one"), h2.MinMaxFrameSize)
			b = h2.AppendHeaders(b, 3, true, getBlock("/", firstDynamic), h2.MinMaxFrameSize)
			c.write(b)
		}, h2.ProtocolError},
		{"trailers after the client ended the stream", func(c *h2client) {
			c.request(1, false, ":method", "POST", ":scheme", "http", ":authority", "h", ":path", "/")
			c.data(1, true, nil)
			b := h2.AppendHeaders(nil, 1, true, indexedField("x-a", "one"), h2.MinMaxFrameSize)
			b = h2.AppendHeaders(b, 3, true, getBlock("/", firstDynamic), h2.MinMaxFrameSize)
			c.write(b)
		}, h2.StreamClosed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, addr := startServer(t, func(c *serve.Ctx) {
				if c.Method() == "POST" {
					// Stream 1 of the trailers: it waits, so that its stream is still the
					// client's to end, until its error resets it.
					io.Copy(io.Discard, bodyReader{c})
					c.Suspend(0)
					return
				}
				echoFieldHandler(c)
			}, serve.Options{})
			c := dialH2(t, addr)
			tc.send(c)
			r3 := c.response(3)
			if r3.status != 200 || string(r3.body) != "x-a=one" {
				t.Fatalf("stream 3: %d %q, reset %v (%v), GOAWAY %+v; want 200 \"x-a=one\"", r3.status, r3.body, r3.rst, r3.code, c.goAway)
			}
			c.until("stream 1's reset", func() bool { s := c.streams[1]; return s != nil && s.rst })
			if r1 := c.streams[1]; r1.code != tc.code {
				t.Fatalf("stream 1 reset with %v, want %v", r1.code, tc.code)
			}
			if c.goAway != nil {
				t.Fatalf("GOAWAY %+v after a stream's error", *c.goAway)
			}
		})
	}
}
