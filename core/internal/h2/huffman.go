package h2

// Huffman strings (RFC 7541 §5.2): decoded bit by bit through a tree built once from the code
// table, and encoded by appending each octet's code.

// huffmanTree is the code as a binary tree, built once: node i's children, for a 0 bit and a 1
// bit, are huffmanTree[i][0] and [1]. A child above 0 is a node; one at or below 0 is a leaf,
// holding minus its octet (the root, node 0, is nobody's child, so 0 is free to be the leaf of
// octet 0); noChild is the branch only EOS's code takes, which a string must not contain.
var huffmanTree = buildHuffmanTree()

const noChild = int16(-32768)

func buildHuffmanTree() [][2]int16 {
	tree := make([][2]int16, 1, 256)
	tree[0] = [2]int16{noChild, noChild}
	for sym := range 256 {
		code, n := huffmanCodes[sym], int(huffmanLens[sym])
		node := 0
		for i := n - 1; i >= 0; i-- {
			bit := code >> uint(i) & 1
			if i == 0 {
				tree[node][bit] = int16(-sym)
				break
			}
			next := tree[node][bit]
			if next == noChild {
				tree = append(tree, [2]int16{noChild, noChild})
				next = int16(len(tree) - 1)
				tree[node][bit] = next
			}
			node = int(next)
		}
	}
	return tree
}

// appendHuffmanDecoded appends the octets the Huffman string s decodes to, or returns false when
// it is malformed (RFC 7541 §5.2): a code no symbol has (EOS's), or padding longer than 7 bits
// or not made of one bits.
func appendHuffmanDecoded(dst, s []byte) ([]byte, bool) {
	node, depth, ones := 0, 0, true // the code read so far: its node, its length, all ones
	for _, b := range s {
		for i := 7; i >= 0; i-- {
			bit := b >> uint(i) & 1
			next := huffmanTree[node][bit]
			switch {
			case next == noChild:
				return dst, false // EOS, or beyond it
			case next <= 0:
				dst = append(dst, byte(-next))
				node, depth, ones = 0, 0, true
			default:
				node, depth, ones = int(next), depth+1, ones && bit == 1
			}
		}
	}
	return dst, depth <= 7 && ones
}

// huffmanLen returns the length in octets of s encoded.
func huffmanLen(s []byte) int {
	bits := 0
	for _, c := range s {
		bits += int(huffmanLens[c])
	}
	return (bits + 7) / 8
}

// appendHuffman appends s encoded, padded with one bits.
func appendHuffman(dst, s []byte) []byte {
	var acc uint64 // bits not yet appended, right-aligned
	n := 0         // how many
	for _, c := range s {
		acc = acc<<huffmanLens[c] | uint64(huffmanCodes[c])
		n += int(huffmanLens[c])
		for n >= 8 {
			n -= 8
			dst = append(dst, byte(acc>>uint(n)))
		}
	}
	if n > 0 {
		dst = append(dst, byte(acc<<uint(8-n))|byte(0xff>>uint(n)))
	}
	return dst
}
