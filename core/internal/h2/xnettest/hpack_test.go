package xnettest

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/dwellhttp/dwell/core/internal/h2"
	"golang.org/x/net/http2/hpack"
)

// randomFields returns a header list like a client's: pseudo-header and common names from the
// static table, names of its own, values of every octet but the control ones, some repeated so
// that the encoder's dynamic table serves them.
func randomFields(r *rand.Rand) []hpack.HeaderField {
	names := []string{":method", ":path", ":authority", ":scheme", "accept", "user-agent", "cookie",
		"x-request-id", "x-custom-" + fmt.Sprint(r.IntN(20)), "accept-encoding", "authorization"}
	fields := make([]hpack.HeaderField, 1+r.IntN(12))
	for i := range fields {
		v := make([]byte, r.IntN(80))
		for j := range v {
			v[j] = byte(0x20 + r.IntN(0x7f-0x20))
			if r.IntN(10) == 0 {
				v[j] = byte(0x80 + r.IntN(0x80)) // obs-text, Huffman's long codes
			}
		}
		if r.IntN(3) == 0 {
			v = []byte("repeated value " + fmt.Sprint(r.IntN(5)))
		}
		fields[i] = hpack.HeaderField{Name: names[r.IntN(len(names))], Value: string(v), Sensitive: r.IntN(8) == 0}
	}
	return fields
}

// TestDecodesXNetEncoder: header lists x/net's encoder writes — Huffman when shorter, its
// dynamic table indexing repeated fields, table size updates between blocks — decode to the
// same fields, block after block on one connection.
func TestDecodesXNetEncoder(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for conn := range 50 {
		var buf bytes.Buffer
		enc := hpack.NewEncoder(&buf)
		dec := h2.NewDecoder(4096)
		for block := range 40 {
			buf.Reset()
			if block%13 == 12 {
				enc.SetMaxDynamicTableSize(uint32(r.IntN(4097)))
			}
			fields := randomFields(r)
			var want bytes.Buffer
			for _, f := range fields {
				enc.WriteField(f)
				fmt.Fprintf(&want, "%s: %q %v\n", f.Name, f.Value, f.Sensitive)
			}
			var got bytes.Buffer
			err := dec.Decode(buf.Bytes(), func(name, value []byte, sensitive bool) error {
				fmt.Fprintf(&got, "%s: %q %v\n", name, value, sensitive)
				return nil
			})
			if err != nil || got.String() != want.String() {
				t.Fatalf("connection %d, block %d (% x): %v\n%s\nwant\n%s", conn, block, buf.Bytes(), err, &got, &want)
			}
		}
	}
}

// TestXNetDecodesAppenders: what dwell's appenders write for a response, x/net's decoder reads
// as the same fields.
func TestXNetDecodesAppenders(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 500 {
		fields := randomFields(r)
		block := h2.AppendStatus(nil, []int{200, 204, 304, 404, 418, 500, 103}[r.IntN(7)])
		for _, f := range fields {
			block = h2.AppendField(block, []byte(f.Name), []byte(f.Value), f.Sensitive)
		}
		got, err := hpack.NewDecoder(4096, nil).DecodeFull(block)
		if err != nil || len(got) != len(fields)+1 {
			t.Fatalf("% x: %v, %d fields", block, err, len(got))
		}
		for i, f := range fields {
			if got[i+1] != f {
				t.Fatalf("field %d: %v, want %v", i, got[i+1], f)
			}
		}
	}
}
