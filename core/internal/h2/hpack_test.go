package h2

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// decodeAll decodes block and returns its fields as "name: value" lines.
func decodeAll(d *Decoder, block []byte) (string, error) {
	var b strings.Builder
	err := d.Decode(block, func(name, value []byte, sensitive bool) error {
		fmt.Fprintf(&b, "%s: %s", name, value)
		if sensitive {
			b.WriteString(" (never indexed)")
		}
		b.WriteByte('\n')
		return nil
	})
	return b.String(), err
}

// TestRFC7541Requests: the request examples of RFC 7541 Appendix C.3 (literals) and C.4
// (Huffman), three requests on one connection each, with the dynamic table after each.
func TestRFC7541Requests(t *testing.T) {
	want := []string{
		":method: GET\n:scheme: http\n:path: /\n:authority: www.example.com\n",
		":method: GET\n:scheme: http\n:path: /\n:authority: www.example.com\ncache-control: no-cache\n",
		":method: GET\n:scheme: https\n:path: /index.html\n:authority: www.example.com\ncustom-key: custom-value\n",
	}
	wantUsed := []uint32{57, 110, 164}
	for name, blocks := range map[string][]string{
		"C.3": {"828684410f7777772e6578616d706c652e636f6d", "828684be58086e6f2d6361636865",
			"828785bf400a637573746f6d2d6b65790c637573746f6d2d76616c7565"},
		"C.4": {"828684418cf1e3c2e5f23a6ba0ab90f4ff", "828684be5886a8eb10649cbf",
			"828785bf408825a849e95ba97d7f8925a849e95bb8e8b4bf"},
	} {
		d := NewDecoder(4096)
		for i, h := range blocks {
			b, _ := hex.DecodeString(h)
			got, err := decodeAll(d, b)
			if err != nil || got != want[i] {
				t.Fatalf("%s request %d: %q, %v; want %q", name, i+1, got, err, want[i])
			}
			if d.used != wantUsed[i] {
				t.Errorf("%s request %d: table size %d, want %d", name, i+1, d.used, wantUsed[i])
			}
		}
		if n, v, _ := d.at(62); string(n) != "custom-key" || string(v) != "custom-value" {
			t.Errorf("%s: the newest entry is %s: %s", name, n, v)
		}
	}
}

// TestDecoderEvicts: entries go oldest first as the table fills, a field larger than the table
// empties it, and a size update shrinks it; the buffer behind it stays within twice its size.
func TestDecoderEvicts(t *testing.T) {
	d := NewDecoder(256)
	field := func(i int) []byte { // a literal with indexing, a new name: 32+6+50 = 88 bytes
		return AppendLiteralIndexed(nil, []byte(fmt.Sprintf("name%02d", i)), bytes.Repeat([]byte{'v'}, 50))
	}
	for i := range 100 {
		if _, err := decodeAll(d, field(i)); err != nil {
			t.Fatal(err)
		}
		if d.used > 256 || len(d.data) > 2*256 {
			t.Fatalf("after %d fields: %d bytes used, %d held", i+1, d.used, len(d.data))
		}
	}
	if n, _, ok := d.at(62); !ok || string(n) != "name99" {
		t.Fatalf("the newest entry is %q", n)
	}
	if n, _, ok := d.at(62 + 1); !ok || string(n) != "name98" {
		t.Fatalf("the second newest entry is %q", n)
	}
	if _, _, ok := d.at(62 + 2); ok {
		t.Fatal("a third entry of 88 bytes in a table of 256")
	}
	big := AppendLiteralIndexed(nil, []byte("big"), bytes.Repeat([]byte{'x'}, 300))
	if _, err := decodeAll(d, big); err != nil || d.used != 0 {
		t.Fatalf("a field larger than the table: %v, %d bytes used, want 0", err, d.used)
	}
	decodeAll(d, field(1))
	if _, err := decodeAll(d, appendInt(nil, 0x20, 5, 0)); err != nil || d.used != 0 {
		t.Fatalf("a size update to 0: %v, %d bytes used", err, d.used)
	}
}

// TestDecoderRefuses: malformed blocks are COMPRESSION_ERROR.
func TestDecoderRefuses(t *testing.T) {
	for name, block := range map[string][]byte{
		"index 0":                        {0x80},
		"index past the tables":          {0xbe},
		"name index past the tables":     {0x7f, 0x10, 0x01, 'v'},
		"integer cut short":              {0xff},
		"integer too large":              {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x0f},
		"string longer than the block":   {0x00, 0x05, 'a'},
		"size update after a field":      {0x82, 0x20},
		"size update above the setting":  appendInt(nil, 0x20, 5, 4097),
		"Huffman EOS":                    {0x00, 0x81, 'a', 0x84, 0xff, 0xff, 0xff, 0xff},
		"Huffman padding of 8 bits":      {0x00, 0x81, 'a', 0x82, 0x1f, 0xff},
		"Huffman padding not of ones":    {0x00, 0x81, 'a', 0x81, 0x00},
		"literal name missing":           {0x40},
		"value missing after a new name": {0x00, 0x01, 'a'},
	} {
		_, err := decodeAll(NewDecoder(4096), block)
		var ce *ConnError
		if !errors.As(err, &ce) || ce.Code != CompressionError {
			t.Errorf("%s: %v, want COMPRESSION_ERROR", name, err)
		}
	}
}

// TestAppendedFieldsDecode: what the appenders write decodes to what they were given, and a
// sensitive field comes back never indexed; the statuses of the static table are one byte.
func TestAppendedFieldsDecode(t *testing.T) {
	var b []byte
	b = AppendStatus(b, 200)
	if len(b) != 1 {
		t.Fatalf(":status 200 as % x, want one byte", b)
	}
	b = AppendStatus(b, 418)
	b = AppendField(b, []byte("content-type"), []byte("text/plain; charset=utf-8"), false)
	b = AppendField(b, []byte("x-trace"), []byte("0123456789abcdef"), false)
	b = AppendField(b, []byte("set-cookie"), []byte("id=1; Secure"), true)
	b = AppendField(b, []byte("x-empty"), nil, false)
	got, err := decodeAll(NewDecoder(4096), b)
	want := ":status: 200\n:status: 418\ncontent-type: text/plain; charset=utf-8\nx-trace: 0123456789abcdef\n" +
		"set-cookie: id=1; Secure (never indexed)\nx-empty: \n"
	if err != nil || got != want {
		t.Fatalf("%q, %v; want %q", got, err, want)
	}
}

// TestHuffmanRoundTrip: every octet, and strings of every length up to a few codes' worth.
func TestHuffmanRoundTrip(t *testing.T) {
	all := make([]byte, 256)
	for i := range all {
		all[i] = byte(i)
	}
	for n := 0; n <= len(all); n++ {
		s := all[:n]
		enc := appendHuffman(nil, s)
		if len(enc) != huffmanLen(s) {
			t.Fatalf("%d octets: %d encoded, huffmanLen says %d", n, len(enc), huffmanLen(s))
		}
		if dec, ok := appendHuffmanDecoded(nil, enc); !ok || !bytes.Equal(dec, s) {
			t.Fatalf("%d octets: decoded %v (%v)", n, dec, ok)
		}
	}
}

// TestDecodeAllocates: decoding a request's block, Huffman strings and table insertions
// included, allocates nothing once the decoder's buffers have grown.
func TestDecodeAllocates(t *testing.T) {
	// C.4.1 and a custom field, both Huffman, both inserted into the table.
	b, _ := hex.DecodeString("828684418cf1e3c2e5f23a6ba0ab90f4ff408825a849e95ba97d7f8925a849e95bb8e8b4bf")
	d := NewDecoder(4096)
	f := func(name, value []byte, sensitive bool) error { return nil }
	for range 200 {
		if err := d.Decode(b, f); err != nil {
			t.Fatal(err)
		}
	}
	if n := testing.AllocsPerRun(1000, func() { d.Decode(b, f) }); n != 0 {
		t.Fatalf("%v allocations per block", n)
	}
}

// TestNameOfEvictedEntry: a field that takes its name from the entry its own insertion evicts
// keeps that name (RFC 7541 §4.4's caution), also when the eviction compacts the table.
func TestNameOfEvictedEntry(t *testing.T) {
	d := NewDecoder(200)
	for _, b := range [][]byte{
		AppendLiteralIndexed(nil, []byte("n1"), bytes.Repeat([]byte{'a'}, 50)), // 84 bytes
		AppendLiteralIndexed(nil, []byte("n2"), bytes.Repeat([]byte{'c'}, 10)), // 44
	} {
		if _, err := decodeAll(d, b); err != nil {
			t.Fatal(err)
		}
	}
	// With indexing, the name of entry 63 (n1's, the oldest), 74 bytes: n1 goes to make room,
	// and the table's bytes move down over where its name was.
	third := appendInt(nil, 0x40, 6, 63)
	third = appendString(third, bytes.Repeat([]byte{'b'}, 40))
	got, err := decodeAll(d, third)
	if want := "n1: " + strings.Repeat("b", 40) + "\n"; err != nil || got != want {
		t.Fatalf("%q, %v; want %q", got, err, want)
	}
	n, v, ok := d.at(62)
	if !ok || string(n) != "n1" || string(v) != strings.Repeat("b", 40) || d.used != 44+74 {
		t.Fatalf("the newest entry is %q: %q (%v), %d bytes used", n, v, ok, d.used)
	}
	if n, _, _ := d.at(63); string(n) != "n2" {
		t.Fatalf("the entry before it is %q, want n2", n)
	}
}
