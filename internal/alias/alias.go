// Package alias is where dwell views memory as another type without copying it: a []byte as a
// string and back, a slice of one struct type as a slice of another with the same fields, a
// pointer to a struct's first field as a pointer to the struct, a string in an interface
// without the conversion's allocations, and addresses compared for identity. It is the one
// package outside core/internal that imports unsafe; each function says what its callers must
// hold for it to be safe, and alias_test.go checks every layout it assumes.
package alias

import "unsafe"

// String views b as a string without copying it. The caller must not change b while the string
// is in use: it is for a comparison, a map lookup or a parse within a call, or for bytes that
// are never written again.
func String(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// Bytes views s's bytes as a []byte without copying them, for a call that only reads them (a
// Write). The bytes must never be written through it: a string's memory may be read-only.
func Bytes(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

// Slice views s as a slice of To without copying it: the same array, the same length. To and
// From must have the same size and the same fields in the same order (two struct types whose
// conversion compiles, say: the caller proves it with one), and the caller must treat the
// result as it would s. It panics when the sizes differ.
func Slice[To, From any](s []From) []To {
	var to To
	var from From
	if unsafe.Sizeof(to) != unsafe.Sizeof(from) {
		panic("alias: Slice between types of different sizes")
	}
	return unsafe.Slice((*To)(unsafe.Pointer(unsafe.SliceData(s))), len(s))
}

// Outer returns the struct whose first field p points at. The caller must know that p is the
// first field (at offset 0: a test of the caller's checks it with unsafe.Offsetof) of a live T:
// a pointer into anything else is memory corruption.
func Outer[T, F any](p *F) *T { return (*T)(unsafe.Pointer(p)) }

// Within reports whether b starts inside base's length. It compares addresses only; no pointer
// is made from them.
func Within(b, base []byte) bool {
	if cap(b) == 0 || len(base) == 0 {
		return false
	}
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	start := uintptr(unsafe.Pointer(unsafe.SliceData(base)))
	return p >= start && p < start+uintptr(len(base))
}

// StringAddr returns the address of s's bytes, for a cache keyed by the identity of strings
// that are made once and reused (route patterns): it is only compared, never made a pointer
// again, and two strings with the same address and length are the same bytes.
func StringAddr(s string) uintptr { return uintptr(unsafe.Pointer(unsafe.StringData(s))) }

// SliceAt returns the n bytes that start at p, a buffer's first byte kept (as a *byte, which an
// interface holds without an allocation) while the buffer waited in a pool: the array must be
// at least n bytes long, as it was when p was taken from it.
func SliceAt(p *byte, n int) []byte { return unsafe.Slice(p, n) }

// As reinterprets v as a To: the same bits, read as another type. To and From must be laid out
// alike, as core's public types are laid out as the internal ones behind them (a pointer to a
// struct whose only field is the other struct, a function whose parameters are such pointers
// or such structs, a struct of the same fields at the same offsets): the caller's test proves
// it field by field, with reflect. It panics when the sizes differ.
func As[To, From any](v From) To {
	var to To
	if unsafe.Sizeof(to) != unsafe.Sizeof(v) {
		panic("alias: As between types of different sizes")
	}
	return *(*To)(unsafe.Pointer(&v))
}
