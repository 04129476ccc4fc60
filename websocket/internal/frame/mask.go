package frame

import (
	"encoding/binary"
	"math/bits"
)

// Mask XORs b in place with the masking key (RFC 6455 §5.3), starting at position pos of the
// key (0 for a payload's first byte; only pos's low two bits count), and returns the position
// after b. A payload that arrives in pieces is masked by passing each call's result to the
// next; masking twice with the same key and position restores the bytes.
//
// It works a 64-bit word at a time, with the key repeated and rotated to pos; only the last
// bytes, fewer than 8, go one at a time. The words are unaligned loads, which cost little on the
// machines Go runs on, so there is no lead-in to align b.
func Mask(key [4]byte, pos int, b []byte) int {
	pos &= 3
	end := (pos + len(b)) & 3
	if len(b) >= 8 {
		k32 := uint64(binary.LittleEndian.Uint32(key[:]))
		// Byte i of k is key[i&3]; rotated right by pos bytes, byte i is key[(pos+i)&3], the
		// key byte that masks b[i]. A word is 8 bytes, two whole keys, so every word uses the
		// same k.
		k := bits.RotateLeft64(k32|k32<<32, -8*pos)
		for len(b) >= 32 {
			w := b[:32]
			binary.LittleEndian.PutUint64(w[0:], binary.LittleEndian.Uint64(w[0:])^k)
			binary.LittleEndian.PutUint64(w[8:], binary.LittleEndian.Uint64(w[8:])^k)
			binary.LittleEndian.PutUint64(w[16:], binary.LittleEndian.Uint64(w[16:])^k)
			binary.LittleEndian.PutUint64(w[24:], binary.LittleEndian.Uint64(w[24:])^k)
			b = b[32:]
		}
		for len(b) >= 8 {
			binary.LittleEndian.PutUint64(b, binary.LittleEndian.Uint64(b)^k)
			b = b[8:]
		}
	}
	for i := range b {
		b[i] ^= key[(pos+i)&3]
	}
	return end
}
