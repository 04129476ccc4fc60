package deflate

import "errors"

// errBackReference: the stream has a length/distance pair, which needs a window.
var errBackReference = errors.New("back-reference")

// decodeLiterals decodes a raw DEFLATE stream (RFC 1951 §3.2) made only of stored blocks and
// Huffman-coded literals, and fails with errBackReference at the first length/distance pair.
// It keeps no window at all: what it decodes is what a peer with any window, however small,
// decodes. It stops at the end of a final block, or where the input ends at a block boundary
// (after a sync flush).
func decodeLiterals(in []byte) ([]byte, error) {
	r := bitReader{in: in}
	var out []byte
	for r.pos < 8*len(in) {
		final, typ := r.bits(1), r.bits(2)
		var lit, dist huffman
		switch typ {
		case 0: // stored (§3.2.4)
			r.pos = (r.pos + 7) &^ 7
			n, nn := r.bits(16), r.bits(16)
			if r.err != nil || n != ^nn&0xffff || r.pos/8+n > len(in) {
				return out, errors.New("bad stored block")
			}
			out = append(out, in[r.pos/8:r.pos/8+n]...)
			r.pos += 8 * n
		case 1: // fixed Huffman codes (§3.2.6)
			var lengths [288]int
			for i := range lengths {
				lengths[i] = [...]int{8, 9, 7, 8}[btoi(i >= 144)+btoi(i >= 256)+btoi(i >= 280)]
			}
			lit = newHuffman(lengths[:])
		case 2: // dynamic Huffman codes (§3.2.7)
			var err error
			if lit, dist, err = r.dynamicCodes(); err != nil {
				return out, err
			}
		default:
			return out, errors.New("reserved block type")
		}
		_ = dist // a distance code is never reached: a length symbol fails first
		if typ != 0 {
			for {
				sym := lit.decode(&r)
				if sym < 0 || r.err != nil {
					return out, errors.New("bad code")
				}
				if sym == 256 { // end of block
					break
				}
				if sym > 256 {
					return out, errBackReference
				}
				out = append(out, byte(sym))
			}
		}
		if r.err != nil {
			return out, r.err
		}
		if final == 1 {
			break
		}
	}
	return out, nil
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// bitReader reads bits least significant first (§3.1.1).
type bitReader struct {
	in  []byte
	pos int // in bits
	err error
}

func (r *bitReader) bits(n int) int {
	v := 0
	for i := range n {
		if r.pos >= 8*len(r.in) {
			r.err = errors.New("unexpected end")
			return 0
		}
		v |= int(r.in[r.pos/8]>>(r.pos%8)&1) << i
		r.pos++
	}
	return v
}

// dynamicCodes reads a dynamic block's code lengths (§3.2.7).
func (r *bitReader) dynamicCodes() (lit, dist huffman, err error) {
	hlit, hdist, hclen := r.bits(5)+257, r.bits(5)+1, r.bits(4)+4
	var clen [19]int
	for i := range hclen {
		clen[[...]int{16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15}[i]] = r.bits(3)
	}
	lengthCode := newHuffman(clen[:])
	lengths := make([]int, 0, hlit+hdist)
	for len(lengths) < hlit+hdist {
		sym := lengthCode.decode(r)
		switch {
		case sym < 0 || r.err != nil:
			return lit, dist, errors.New("bad code length")
		case sym < 16:
			lengths = append(lengths, sym)
		case sym == 16 && len(lengths) > 0:
			for range 3 + r.bits(2) {
				lengths = append(lengths, lengths[len(lengths)-1])
			}
		case sym == 17:
			lengths = append(lengths, make([]int, 3+r.bits(3))...)
		case sym == 18:
			lengths = append(lengths, make([]int, 11+r.bits(7))...)
		default:
			return lit, dist, errors.New("repeat with nothing to repeat")
		}
	}
	if len(lengths) > hlit+hdist {
		return lit, dist, errors.New("code lengths overrun")
	}
	return newHuffman(lengths[:hlit]), newHuffman(lengths[hlit:]), nil
}

// huffman is a canonical Huffman code (§3.2.2): how many codes of each length, and the symbols
// in code order.
type huffman struct {
	count   [16]int
	symbols []int
}

func newHuffman(lengths []int) huffman {
	var h huffman
	for _, l := range lengths {
		h.count[l]++
	}
	h.count[0] = 0
	for l := 1; l < 16; l++ {
		for s, sl := range lengths {
			if sl == l {
				h.symbols = append(h.symbols, s)
			}
		}
	}
	return h
}

// decode reads one symbol, a bit at a time: codes are packed most significant bit first.
func (h *huffman) decode(r *bitReader) int {
	code, first, index := 0, 0, 0
	for l := 1; l < 16; l++ {
		code |= r.bits(1)
		if code-first < h.count[l] {
			return h.symbols[index+code-first]
		}
		index += h.count[l]
		first = (first + h.count[l]) << 1
		code <<= 1
	}
	return -1
}
