package frame

import (
	"bytes"
	"fmt"
	"testing"
)

// maskSlow is §5.3's definition: "octet i of the transformed data is the XOR of octet i of the
// original data with octet at index i modulo 4 of the masking key".
func maskSlow(key [4]byte, pos int, b []byte) int {
	for i := range b {
		b[i] ^= key[(pos+i)%4]
	}
	return (pos + len(b)) % 4
}

func TestMaskRFCExample(t *testing.T) {
	// §5.7: "Hello" masked with 37 fa 21 3d.
	b := []byte("\x7f\x9f\x4d\x51\x58")
	if pos := Mask(rfcKey, 0, b); string(b) != "Hello" || pos != 1 {
		t.Errorf("unmasked %q, pos %d", b, pos)
	}
}

func TestMaskMatchesDefinition(t *testing.T) {
	key := [4]byte{0x01, 0x23, 0x45, 0x67}
	data := make([]byte, 300)
	for i := range data {
		data[i] = byte(i * 7)
	}
	for pos := range 8 { // positions past 3 count modulo 4
		for n := range len(data) {
			for off := range 8 { // the unaligned starts the word loop works on
				if off+n > len(data) {
					break
				}
				got := bytes.Clone(data[off : off+n])
				want := bytes.Clone(got)
				p := Mask(key, pos, got)
				q := maskSlow(key, pos, want)
				if !bytes.Equal(got, want) || p != q {
					t.Fatalf("pos %d, %d bytes at offset %d: got %x (%d), want %x (%d)", pos, n, off, got, p, want, q)
				}
			}
		}
	}
}

// TestMaskInPieces: §5.3's index is the payload's, not the piece's: masking a payload in pieces,
// each from the position the last returned, equals masking it at once.
func TestMaskInPieces(t *testing.T) {
	key := [4]byte{0xde, 0xad, 0xbe, 0xef}
	data := []byte("a payload long enough to be masked in pieces of every size at every split point")
	whole := bytes.Clone(data)
	Mask(key, 0, whole)
	for i := range len(data) + 1 {
		for j := i; j <= len(data); j++ {
			b := bytes.Clone(data)
			pos := Mask(key, 0, b[:i])
			pos = Mask(key, pos, b[i:j])
			Mask(key, pos, b[j:])
			if !bytes.Equal(b, whole) {
				t.Fatalf("split at %d and %d: %q", i, j, b)
			}
		}
	}
}

func BenchmarkMask(b *testing.B) {
	key := [4]byte{1, 2, 3, 4}
	for _, size := range []int{1 << 10, 64 << 10} {
		for _, pos := range []int{0, 3} {
			b.Run(fmt.Sprintf("%dKiB/pos%d", size>>10, pos), func(b *testing.B) {
				buf := make([]byte, size)
				b.SetBytes(int64(size))
				for b.Loop() {
					Mask(key, pos, buf)
				}
			})
		}
	}
}

// BenchmarkMaskBytewise is the byte-at-a-time loop of §5.3's definition, for comparison.
func BenchmarkMaskBytewise(b *testing.B) {
	key := [4]byte{1, 2, 3, 4}
	buf := make([]byte, 64<<10)
	b.SetBytes(int64(len(buf)))
	for b.Loop() {
		maskSlow(key, 0, buf)
	}
}
