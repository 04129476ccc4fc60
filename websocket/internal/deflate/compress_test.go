package deflate

import (
	"bytes"
	"compress/flate"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
)

// syncTail is what RFC 7692 §7.2.1 removes from a message and §7.2.2 appends back.
const syncTail = "\x00\x00\xff\xff"

// plainInflate inflates payload+syncTail with a plain flate.Reader, as RFC 7692 §7.2.2 says,
// reading until the stream ends (with io.ErrUnexpectedEOF, after the sync flush's empty block,
// or io.EOF after a final block).
func plainInflate(payload []byte) ([]byte, error) {
	out, err := io.ReadAll(flate.NewReader(io.MultiReader(bytes.NewReader(payload), strings.NewReader(syncTail))))
	if err == io.ErrUnexpectedEOF {
		err = nil
	}
	return out, err
}

// deflated is msg compressed alone with a full window, as NewCompressor(false, 15) does it.
func deflated(msg []byte) []byte {
	c := NewCompressor(false, 15)
	return c.Compress(nil, msg)
}

// messages are payloads of the kinds a WebSocket carries.
func messages() [][]byte {
	r := rand.New(rand.NewPCG(7, 7))
	random := make([]byte, 100<<10)
	for i := range random {
		random[i] = byte(r.Uint32())
	}
	json := []byte(strings.Repeat(`{"id":12345,"user":"someone","text":"a message of the usual kind","tags":["a","b"]},`, 1500))
	return [][]byte{
		{},
		[]byte("Hello"),
		[]byte(strings.Repeat("a text message just over a hundred and twenty-eight bytes ", 3)),
		json[:1<<10],
		json,                  // 130 KB: several DEFLATE blocks
		random,                // incompressible
		make([]byte, 300<<10), // zeros
	}
}

// modes are the Compressor configurations RFC 7692's parameters lead to.
var modes = []struct {
	name     string
	takeover bool
	bits     int
}{
	{"no takeover", false, 15},
	{"takeover", true, 15},
	{"window 9", false, 9},
	{"window 8, takeover asked", true, 8},
	{"zero value", false, 0},
}

// TestRoundTrip: what the Compressor writes inflates back, with our Decompressor and with a plain
// flate.Reader over the payload and the 4 bytes of §7.2.2: message by message without context
// takeover, as one stream of messages with it.
func TestRoundTrip(t *testing.T) {
	for _, m := range modes {
		c := NewCompressor(m.takeover, m.bits)
		d := NewDecompressor(m.takeover)
		var stream, all []byte
		for i, msg := range messages() {
			payload := c.Compress([]byte("prefix"), msg)
			if string(payload[:6]) != "prefix" {
				t.Fatalf("%s: Compress did not append", m.name)
			}
			payload = payload[6:]
			out, err := d.Decompress([]byte("x"), payload, len(msg))
			if err != nil || !bytes.Equal(out[1:], msg) || out[0] != 'x' {
				t.Fatalf("%s, message %d: Decompress: %d bytes, %v", m.name, i, len(out)-1, err)
			}
			if !m.takeover || m.bits < 15 {
				plain, err := plainInflate(payload)
				if err != nil || !bytes.Equal(plain, msg) {
					t.Fatalf("%s, message %d: flate.Reader: %d bytes, %v", m.name, i, len(plain), err)
				}
			}
			stream = append(append(stream, payload...), syncTail...)
			all = append(all, msg...)
		}
		plain, err := io.ReadAll(flate.NewReader(bytes.NewReader(stream)))
		if err != io.ErrUnexpectedEOF || !bytes.Equal(plain, all) {
			t.Fatalf("%s: the messages as one stream: %d bytes, %v", m.name, len(plain), err)
		}
	}
}

// TestEmptyMessage: RFC 7692 §7.2.3.6: an empty message compresses to the single byte 0x00
// (compress/flate's sync flush of nothing is 00 00 00 ff ff: an empty stored block), in every
// mode and after other messages.
func TestEmptyMessage(t *testing.T) {
	for _, m := range modes {
		c := NewCompressor(m.takeover, m.bits)
		for _, msg := range [][]byte{nil, []byte(strings.Repeat("x", 500)), nil} {
			if got := c.Compress(nil, msg); len(msg) == 0 && !bytes.Equal(got, []byte{0}) {
				t.Errorf("%s: empty message compressed to %x", m.name, got)
			}
		}
	}
	var d Decompressor
	for _, payload := range []string{"\x00", ""} { // "": see Decompress
		if out, err := d.Decompress(nil, []byte(payload), 0); err != nil || len(out) != 0 {
			t.Errorf("%x: %q, %v", payload, out, err)
		}
	}
}

// TestRFC7692Examples: the payloads of RFC 7692 §7.2.3, each "Hello".
func TestRFC7692Examples(t *testing.T) {
	hello := "\xf2\x48\xcd\xc9\xc9\x07\x00" // §7.2.3.1: one compressed block
	tests := []struct {
		section, payload string
	}{
		{"7.2.3.1", hello},
		{"7.2.3.3", "\x00\x05\x00\xfa\xff\x48\x65\x6c\x6c\x6f\x00"},         // a stored block
		{"7.2.3.4", "\xf3\x48\xcd\xc9\xc9\x07\x00\x00"},                     // BFINAL set
		{"7.2.3.5", "\xf2\x48\x05\x00\x00\x00\xff\xff\xca\xc9\xc9\x07\x00"}, // two blocks
	}
	for _, tt := range tests {
		for _, takeover := range []bool{false, true} {
			d := NewDecompressor(takeover)
			for i := range 2 {
				out, err := d.Decompress(nil, []byte(tt.payload), 100)
				if err != nil || string(out) != "Hello" {
					t.Errorf("§%s (takeover %v, message %d): %q, %v", tt.section, takeover, i, out, err)
				}
			}
		}
	}
	// §7.2.3.2: with context takeover the second "Hello" is a back-reference into the first.
	d := NewDecompressor(true)
	for i, payload := range []string{hello, "\xf2\x00\x11\x00\x00", "\xf2\x00\x11\x00\x00"} {
		if out, err := d.Decompress(nil, []byte(payload), 100); err != nil || string(out) != "Hello" {
			t.Errorf("§7.2.3.2, message %d: %q, %v", i, out, err)
		}
	}
	// Without it the Decompressor kept nothing, and the reference reaches before the start.
	var alone Decompressor
	alone.Decompress(nil, []byte(hello), 100)
	if out, err := alone.Decompress(nil, []byte("\xf2\x00\x11\x00\x00"), 100); !errors.Is(err, ErrCorrupt) {
		t.Errorf("§7.2.3.2 without takeover: %q, %v; want ErrCorrupt", out, err)
	}
}

// TestContextTakeover: with context takeover a message like the last compresses to less: the
// window carries over (RFC 7692 §7.1.1). compress/flate's BestSpeed looks back into the previous
// block only, and resets its history on a message under 128 bytes, so the messages here are
// longer than that.
func TestContextTakeover(t *testing.T) {
	msg := []byte(`{"type":"update","channel":"prices","data":{"symbol":"ABC","bid":101.25,"ask":101.5,"time":"2024-01-01T00:00:00Z"}}`)
	msg = append(msg, msg...) // 230 bytes
	kept, fresh := NewCompressor(true, 15), NewCompressor(false, 15)
	d := NewDecompressor(true)
	var sizes []int
	for i := range 5 {
		p := kept.Compress(nil, msg)
		sizes = append(sizes, len(p))
		if out, err := d.Decompress(nil, p, len(msg)); err != nil || !bytes.Equal(out, msg) {
			t.Fatalf("message %d: %d bytes, %v", i, len(out), err)
		}
	}
	alone := len(fresh.Compress(nil, msg))
	if len(fresh.Compress(nil, msg)) != alone || sizes[0] != alone {
		t.Errorf("without takeover every message should compress alike: %d, %v", alone, sizes)
	}
	for i, n := range sizes[1:] {
		if n >= alone/2 {
			t.Errorf("message %d with takeover: %d bytes, alone %d", i+1, n, alone)
		}
	}
	t.Logf("%d bytes: alone %d, with takeover %v", len(msg), alone, sizes)
	// Release drops the window: the next message compresses as the first did.
	kept.Release()
	if n := len(kept.Compress(nil, msg)); n != alone {
		t.Errorf("after Release: %d bytes, want %d", n, alone)
	}
}

// TestDecompressorWindow: with takeover, a message may reach back 32 KiB into everything before
// it, across several earlier messages, and no further.
func TestDecompressorWindow(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	c, d := NewCompressor(true, 15), NewDecompressor(true)
	var all []byte
	for i, n := range []int{10, 20000, 5, 40000, 300, 70000, 1} {
		msg := make([]byte, n)
		for j := range msg {
			msg[j] = "abcdefgh"[r.IntN(8)]
		}
		if len(all) > 100 && i%2 == 1 {
			copy(msg, all[len(all)-100:]) // something to refer back to
		}
		out, err := d.Decompress(nil, c.Compress(nil, msg), n)
		if err != nil || !bytes.Equal(out, msg) {
			t.Fatalf("message %d: %d bytes, %v", i, len(out), err)
		}
		all = append(all, msg...)
		if want := all[max(0, len(all)-windowSize):]; !bytes.Equal(d.dict, want) {
			t.Fatalf("message %d: window of %d bytes, want the last %d", i, len(d.dict), len(want))
		}
	}
	if cap(d.dict) != windowSize {
		t.Errorf("window buffer of %d bytes", cap(d.dict))
	}
}

// TestHuffmanOnly: below a 15-bit window the Compressor makes no back-references: its output
// decodes with no window at all (decodeLiterals keeps none), so any window the client has, 256
// bytes included, is enough. BestSpeed's output, for contrast, has back-references.
func TestHuffmanOnly(t *testing.T) {
	for _, msg := range messages() {
		for _, bits := range []int{8, 9, 14} {
			for _, takeover := range []bool{false, true} {
				c := NewCompressor(takeover, bits)
				for i := range 2 { // the second message cannot refer to the first either
					payload := c.Compress(nil, msg)
					out, err := decodeLiterals(append(payload, syncTail...))
					if err != nil || !bytes.Equal(out, msg) {
						t.Fatalf("%d bytes, window %d, message %d: %d bytes, %v", len(msg), bits, i, len(out), err)
					}
				}
			}
		}
	}
	payload := deflated([]byte(strings.Repeat("abc", 1000)))
	if _, err := decodeLiterals(append(payload, syncTail...)); err != errBackReference {
		t.Errorf("BestSpeed: %v, want errBackReference (the checker checks nothing)", err)
	}
}

// TestDecompressLimit: a message that inflates past the limit fails with ErrTooLarge, having
// written no more than limit bytes; one at the limit passes.
func TestDecompressLimit(t *testing.T) {
	zeros := deflated(make([]byte, 1<<20))
	t.Logf("1 MiB of zeros compresses to %d bytes", len(zeros))
	for _, limit := range []int{0, 1, 100, 64 << 10, 1<<20 - 1} {
		var d Decompressor
		out, err := d.Decompress(make([]byte, 3), zeros, limit)
		if err != ErrTooLarge || len(out) != 3 {
			t.Errorf("limit %d: %d bytes, %v; want ErrTooLarge", limit, len(out), err)
		}
		if cap(out) > 3+max(limit, 512) {
			t.Errorf("limit %d: grew to %d bytes", limit, cap(out))
		}
	}
	var d Decompressor
	if out, err := d.Decompress(nil, zeros, 1<<20); err != nil || len(out) != 1<<20 {
		t.Errorf("at the limit: %d bytes, %v", len(out), err)
	}
	// A caller's buffer with room is written in place, and not past the limit.
	buf := bytes.Repeat([]byte{0xaa}, 2<<20)[:0]
	if out, err := d.Decompress(buf, zeros, 1000); err != ErrTooLarge || &out[:1][0] != &buf[:1][0] {
		t.Errorf("in place: %v", err)
	}
	if got := bytes.IndexByte(buf[:2<<20], 0xaa); got != 1000 {
		t.Errorf("%d bytes written, want 1000", got)
	}
}

// TestDecompressCorrupt: what is not a DEFLATE stream is ErrCorrupt, not a panic or a short
// message.
func TestDecompressCorrupt(t *testing.T) {
	hello := deflated([]byte(strings.Repeat("Hello, world. ", 20)))
	for _, payload := range []string{
		"\x07",                         // BTYPE 11, reserved (RFC 1951 §3.2.3)
		"\x00\x05\x00\x00\x00Hello",    // a stored block whose NLEN is not LEN's complement
		string(hello[:len(hello)/2]),   // cut short
		"\xf2\x00\x11\x00\x00",         // a back-reference before the start
		"\xff\xff\xff\xff\xff\xff\xff", // BFINAL and the reserved BTYPE 11
		// Found by FuzzDecompress: a fixed-Huffman block left unfinished, which decodes on into
		// the bytes Decompress appends and happens to reach an end of stream there.
		"c00AA7A\xe0\xe0",
		string(hello) + syncTail,                // the sender did not remove the 4 bytes (§7.2.1)
		string(hello[:len(hello)-1]),            // the empty stored block's header cut off
		"\x00\x05\x00\xfa\xffHel",               // a stored block cut short
		"\x00\x05\x00\xfa\xffHello\x00\x00\x00", // LEN and NLEN of the last block half there
	} {
		var d Decompressor
		if out, err := d.Decompress(nil, []byte(payload), 1<<20); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%x: %q, %v; want ErrCorrupt", payload, out, err)
		}
	}
}

func BenchmarkCompress(b *testing.B) {
	for _, size := range []int{1 << 10, 64 << 10} {
		msg := messages()[4][:size]
		for _, m := range modes[:3] {
			b.Run(fmt.Sprintf("%dKiB/%s", size>>10, m.name), func(b *testing.B) {
				c := NewCompressor(m.takeover, m.bits)
				dst := make([]byte, 0, 2*size)
				b.SetBytes(int64(size))
				b.ReportAllocs()
				for b.Loop() {
					dst = c.Compress(dst[:0], msg)
				}
				b.ReportMetric(float64(len(dst)), "bytes/msg")
			})
		}
	}
}

func BenchmarkDecompress(b *testing.B) {
	for _, size := range []int{1 << 10, 64 << 10} {
		msg := messages()[4][:size]
		for _, takeover := range []bool{false, true} {
			b.Run(fmt.Sprintf("%dKiB/takeover=%v", size>>10, takeover), func(b *testing.B) {
				payload := deflated(msg)
				d := NewDecompressor(takeover)
				dst := make([]byte, 0, size)
				b.SetBytes(int64(size))
				b.ReportAllocs()
				for b.Loop() {
					var err error
					if dst, err = d.Decompress(dst[:0], payload, size); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
