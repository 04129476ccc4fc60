package interop

import (
	"bytes"
	"compress/flate"
	"fmt"
	"io"
	"testing"
)

// inflateChecked is a DEFLATE decoder (RFC 1951) written for the suite, to see what
// compress/flate's reader hides: how far back the server's compressed messages refer. It
// decodes in after the history dict (the window that context takeover carries over) and
// returns what it decoded and the longest distance of its back-references; a reference before
// the start of dict is an error. A stream ends with a final block, or with a stored block at
// the end of in: a message, with the 4 bytes §7.2.2 has the receiver append, ends with the
// empty stored block of a sync flush.
func inflateChecked(dict, in []byte) (out []byte, maxDist int, err error) {
	d := &inflater{in: in, hist: bytes.Clone(dict)}
	start := len(dict)
	for {
		final, typ := d.bits(1), d.bits(2)
		switch typ {
		case 0:
			d.stored()
		case 1:
			d.codes(&fixedLit, &fixedDist)
		case 2:
			var lit, dist huffman
			d.dynamic(&lit, &dist)
			d.codes(&lit, &dist)
		default:
			d.fail("block type 3")
		}
		if d.err != nil {
			return nil, 0, d.err
		}
		if final == 1 || typ == 0 && d.pos == len(d.in) {
			return d.hist[start:], d.maxDist, nil
		}
	}
}

// An inflater is inflateChecked's state: the input and its bit position, the output after
// the history, the first error.
type inflater struct {
	in      []byte
	pos     int  // the next byte of in
	bitBuf  uint // bits read from in, not used yet, the next one lowest
	bitCnt  uint
	hist    []byte
	maxDist int
	err     error
}

func (d *inflater) fail(format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf("deflate: "+format, args...)
	}
}

// bits returns the next n bits, the first one lowest (RFC 1951 §3.1.1); past the input, zeros
// and an error.
func (d *inflater) bits(n uint) int {
	for d.bitCnt < n {
		if d.pos == len(d.in) {
			d.fail("the stream ends inside a block")
			return 0
		}
		d.bitBuf |= uint(d.in[d.pos]) << d.bitCnt
		d.pos++
		d.bitCnt += 8
	}
	v := int(d.bitBuf & (1<<n - 1))
	d.bitBuf >>= n
	d.bitCnt -= n
	return v
}

// stored copies a stored block (§3.2.4), after the bits left of the current byte.
func (d *inflater) stored() {
	d.bitBuf, d.bitCnt = 0, 0
	if len(d.in)-d.pos < 4 {
		d.fail("a stored block's length is cut")
		return
	}
	n := int(d.in[d.pos]) | int(d.in[d.pos+1])<<8
	if nn := int(d.in[d.pos+2]) | int(d.in[d.pos+3])<<8; n != ^nn&0xffff {
		d.fail("a stored block's NLEN is not LEN's complement")
		return
	}
	d.pos += 4
	if len(d.in)-d.pos < n {
		d.fail("a stored block is cut")
		return
	}
	d.hist = append(d.hist, d.in[d.pos:d.pos+n]...)
	d.pos += n
}

// A huffman code is canonical (§3.2.2): how many codes each length has, and the symbols in
// the codes' order.
type huffman struct {
	count  [16]int
	symbol []int
}

// build makes the code of the code lengths, reporting false for an over-subscribed set.
func (h *huffman) build(lengths []int) bool {
	*h = huffman{symbol: make([]int, len(lengths))}
	for _, l := range lengths {
		h.count[l]++
	}
	left := 1
	for l := 1; l < 16; l++ {
		left = left<<1 - h.count[l]
		if left < 0 {
			return false
		}
	}
	var offs [16]int
	for l := 1; l < 15; l++ {
		offs[l+1] = offs[l] + h.count[l]
	}
	for sym, l := range lengths {
		if l != 0 {
			h.symbol[offs[l]] = sym
			offs[l]++
		}
	}
	return true
}

// decode reads one symbol of h, a bit at a time: codes are packed first bit first (§3.1.1).
func (d *inflater) decode(h *huffman) int {
	code, first, index := 0, 0, 0
	for l := 1; l < 16; l++ {
		code |= d.bits(1)
		if d.err != nil {
			return -1
		}
		n := h.count[l]
		if code-n < first {
			return h.symbol[index+code-first]
		}
		index += n
		first = (first + n) << 1
		code <<= 1
	}
	d.fail("an invalid Huffman code")
	return -1
}

// Lengths and distances: their bases and extra bits (§3.2.5).
var (
	lenBase  = [29]int{3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258}
	lenExtra = [29]uint{0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0}
	distBase = [30]int{1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537, 2049, 3073,
		4097, 6145, 8193, 12289, 16385, 24577}
	distExtra = [30]uint{0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13}
)

// The fixed codes (§3.2.6).
var fixedLit, fixedDist = func() (lit, dist huffman) {
	var l [288]int
	for i := range l {
		switch {
		case i < 144:
			l[i] = 8
		case i < 256:
			l[i] = 9
		case i < 280:
			l[i] = 7
		default:
			l[i] = 8
		}
	}
	lit.build(l[:])
	var dl [30]int
	for i := range dl {
		dl[i] = 5
	}
	dist.build(dl[:])
	return lit, dist
}()

// codes decodes a compressed block's symbols with the literal/length and distance codes.
func (d *inflater) codes(lit, dist *huffman) {
	for d.err == nil {
		sym := d.decode(lit)
		switch {
		case sym < 0:
			return
		case sym < 256:
			d.hist = append(d.hist, byte(sym))
			continue
		case sym == 256:
			return
		case sym > 285:
			d.fail("length symbol %d", sym)
			return
		}
		n := lenBase[sym-257] + d.bits(lenExtra[sym-257])
		ds := d.decode(dist)
		if ds < 0 || ds > 29 {
			d.fail("distance symbol %d", ds)
			return
		}
		back := distBase[ds] + d.bits(distExtra[ds])
		if back > len(d.hist) {
			d.fail("a reference %d bytes back, before the window's start (%d bytes)", back, len(d.hist))
			return
		}
		d.maxDist = max(d.maxDist, back)
		if len(d.hist) > 64<<20 {
			d.fail("more than 64 MiB")
			return
		}
		for range n { // byte by byte: a reference may overlap what it copies
			d.hist = append(d.hist, d.hist[len(d.hist)-back])
		}
	}
}

// clOrder is the order of the code length code's lengths (§3.2.7).
var clOrder = [19]int{16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15}

// dynamic reads a dynamic block's codes (§3.2.7).
func (d *inflater) dynamic(lit, dist *huffman) {
	nlen, ndist, ncode := d.bits(5)+257, d.bits(5)+1, d.bits(4)+4
	if nlen > 286 || ndist > 30 {
		d.fail("%d literal/length codes, %d distance codes", nlen, ndist)
		return
	}
	var cl [19]int
	for i := range ncode {
		cl[clOrder[i]] = d.bits(3)
	}
	var clc huffman
	if !clc.build(cl[:]) {
		d.fail("an over-subscribed code length code")
		return
	}
	lengths := make([]int, 0, nlen+ndist)
	for len(lengths) < nlen+ndist && d.err == nil {
		sym := d.decode(&clc)
		var rep, val int
		switch {
		case sym < 0:
			return
		case sym < 16:
			lengths = append(lengths, sym)
			continue
		case sym == 16:
			if len(lengths) == 0 {
				d.fail("a repeat with nothing to repeat")
				return
			}
			val, rep = lengths[len(lengths)-1], 3+d.bits(2)
		case sym == 17:
			rep = 3 + d.bits(3)
		default:
			rep = 11 + d.bits(7)
		}
		if len(lengths)+rep > nlen+ndist {
			d.fail("code lengths past their count")
			return
		}
		for range rep {
			lengths = append(lengths, val)
		}
	}
	if d.err != nil {
		return
	}
	if lengths[256] == 0 {
		d.fail("no end-of-block code")
		return
	}
	if !lit.build(lengths[:nlen]) || !dist.build(lengths[nlen:]) {
		d.fail("an over-subscribed code")
	}
}

// TestInflateChecked: the suite's decoder reads what compress/flate writes, at every level and
// with a dictionary, finds the references' distances, and refuses one before its window.
func TestInflateChecked(t *testing.T) {
	dict := []byte("a dictionary the message refers to, from its first bytes: ")
	msg := bytes.Clone(dict)
	for i := range 3000 {
		msg = fmt.Appendf(msg, "line %d of %d, the same words again and again; ", i%97, i%13)
	}
	for _, level := range []int{flate.HuffmanOnly, flate.BestSpeed, flate.DefaultCompression, flate.BestCompression} {
		var b bytes.Buffer
		w, _ := flate.NewWriterDict(&b, level, dict)
		w.Write(msg)
		w.Flush()
		out, dist, err := inflateChecked(dict, b.Bytes())
		if err != nil || !bytes.Equal(out, msg) {
			t.Fatalf("level %d: %v, %d bytes, equal %v", level, err, len(out), bytes.Equal(out, msg))
		}
		if level == flate.HuffmanOnly && dist != 0 || level != flate.HuffmanOnly && (dist == 0 || dist > 32768) {
			t.Errorf("level %d: longest distance %d", level, dist)
		}
		if level == flate.DefaultCompression || level == flate.BestCompression { // BestSpeed takes no dictionary
			if _, _, err := inflateChecked(nil, b.Bytes()); err == nil {
				t.Errorf("level %d without its dictionary: %v, want an error", level, err)
			}
		}
	}
}

// TestRFC7692Examples: the payloads of RFC 7692 §7.2.3 that the suite sends inflate to
// "Hello" by both decoders, the second of §7.2.3.2 after the first's window.
func TestRFC7692Examples(t *testing.T) {
	for _, ex := range []struct {
		name          string
		dict, payload []byte
	}{
		{"7.2.3.1", nil, []byte{0xf2, 0x48, 0xcd, 0xc9, 0xc9, 0x07, 0x00}},
		{"7.2.3.2", []byte("Hello"), []byte{0xf2, 0x00, 0x11, 0x00, 0x00}},
		{"7.2.3.4", nil, []byte{0x00, 0x05, 0x00, 0xfa, 0xff, 0x48, 0x65, 0x6c, 0x6c, 0x6f, 0x00}},
		{"7.2.3.5", nil, []byte{0xf2, 0x48, 0x05, 0x00, 0x00, 0x00, 0xff, 0xff, 0xca, 0xc9, 0xc9, 0x07, 0x00}},
	} {
		in := append(bytes.Clone(ex.payload), flushTail[:4]...)
		out, _, err := inflateChecked(ex.dict, in)
		if err != nil || string(out) != "Hello" {
			t.Errorf("%s: %q, %v", ex.name, out, err)
		}
		out, err = io.ReadAll(flate.NewReaderDict(io.MultiReader(bytes.NewReader(ex.payload), bytes.NewReader(flushTail)), ex.dict))
		if err != nil || string(out) != "Hello" {
			t.Errorf("%s by compress/flate: %q, %v", ex.name, out, err)
		}
	}
}
