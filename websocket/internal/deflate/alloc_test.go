//go:build !race

package deflate

import (
	"math/rand/v2"
	"runtime"
	"testing"
)

// TestAllocations: in steady state, with the caller's buffer reused, compressing a message
// without context takeover allocates nothing (the writer comes from the pool), and neither does
// inflating one whose Huffman codes are 9 bits or shorter, as text's are. compress/flate's
// reader allocates the overflow tables of longer codes anew for every block that has them:
// data with a wide, skewed alphabet pays some allocations a block, measured and bounded here.
func TestAllocations(t *testing.T) {
	text := []byte(messages()[3]) // 1 KiB of JSON: a dynamic Huffman block
	small := []byte("Hello")      // a stored block
	r := rand.New(rand.NewPCG(1, 1))
	skewed := make([]byte, 8<<10) // bytes of an exponential distribution: long codes
	for i := range skewed {
		skewed[i] = byte(r.ExpFloat64() * 20)
	}
	dst := make([]byte, 0, 16<<10)
	var c Compressor
	huff := NewCompressor(false, 9)
	if n := testing.AllocsPerRun(100, func() { dst = c.Compress(dst[:0], text) }); n != 0 {
		t.Errorf("Compress: %v allocations", n)
	}
	if n := testing.AllocsPerRun(100, func() { dst = huff.Compress(dst[:0], text) }); n != 0 {
		t.Errorf("Compress, HuffmanOnly: %v allocations", n)
	}
	var d Decompressor
	for _, tt := range []struct {
		name string
		msg  []byte
		max  float64
	}{
		{"stored block", c.Compress(nil, small), 0},
		{"1 KiB JSON", c.Compress(nil, text), 0},
		{"1 KiB JSON, HuffmanOnly", huff.Compress(nil, text), 0},
		{"64 KiB JSON", c.Compress(nil, messages()[4][:64<<10]), 0},
		{"8 KiB skewed bytes", c.Compress(nil, skewed), 32},
	} {
		n := testing.AllocsPerRun(100, func() {
			var err error
			if dst, err = d.Decompress(dst[:0], tt.msg, 64<<10); err != nil {
				panic(err)
			}
		})
		t.Logf("Decompress, %s: %v allocations", tt.name, n)
		if n > tt.max {
			t.Errorf("Decompress, %s: %v allocations, want at most %v", tt.name, n, tt.max)
		}
	}
}

// TestDecompressBombAllocation: 1 MiB of zeros (1.3 KB compressed) inflated with a limit of
// 64 KiB fails having allocated about the limit: the output buffer, grown by doubling to
// the limit (about twice the limit in all), and nothing in proportion to the 1 MiB.
func TestDecompressBombAllocation(t *testing.T) {
	const limit = 64 << 10
	bomb := deflated(make([]byte, 1<<20))
	var d Decompressor
	// The least of a few tries: a garbage collection in between empties the pool, and the next
	// call makes a flate reader (about 40 KB) again.
	allocated := ^uint64(0)
	for range 5 {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := d.Decompress(nil, bomb, limit)
		runtime.ReadMemStats(&after)
		if err != ErrTooLarge {
			t.Fatalf("err %v", err)
		}
		allocated = min(allocated, after.TotalAlloc-before.TotalAlloc)
	}
	t.Logf("allocated %d bytes for a limit of %d", allocated, limit)
	if allocated > 5*limit/2 {
		t.Errorf("allocated %d bytes, over 2.5 × the limit", allocated)
	}
}

// TestNegotiateAllocations: Negotiate allocates nothing, whatever it is given: what browsers and
// common libraries offer, an echoed server_max_window_bits (its responses are constants too), a
// quoted value to unescape, several lines, offers declined, a malformed list.
func TestNegotiateAllocations(t *testing.T) {
	for _, values := range [][]string{
		{"permessage-deflate"},
		{"permessage-deflate; client_max_window_bits"}, // Chromium, Firefox
		{"permessage-deflate; server_no_context_takeover; client_no_context_takeover"},
		{"permessage-deflate; client_max_window_bits, x-webkit-deflate-frame"},
		{"permessage-deflate; client_no_context_takeover; client_max_window_bits; server_max_window_bits=9"},
		{`permessage-deflate; server_max_window_bits="10"`},
		{`permessage-deflate; server_max_window_bits="1\2"; client_max_window_bits="\9"`},
		{"x-webkit-deflate-frame", "permessage-deflate; mux, permessage-deflate; client_max_window_bits=16", "permessage-deflate"},
		{"x-webkit-deflate-frame"},
		{"permessage-deflate", "a b"},
	} {
		for _, allow := range []bool{false, true} {
			if n := testing.AllocsPerRun(100, func() { _, _, _, _ = Negotiate(values, allow) }); n != 0 {
				t.Errorf("Negotiate(%q, %v): %v allocations", values, allow, n)
			}
		}
	}
}
