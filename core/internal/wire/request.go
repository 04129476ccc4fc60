package wire

import (
	"bytes"
	"unsafe"

	"github.com/dwellhttp/dwell/internal/syntax"

	"github.com/dwellhttp/dwell/internal/bufpool"
)

// A Span locates a string inside a request's arena: offsets rather than strings so that the
// request's field table costs 16 bytes a field, not 32.
type Span struct{ off, n uint32 }

// RawQuery returns the span of the target's query, without its '?': empty when it has none.
// The first '?' of any form of target begins its query (an authority has none), so it is
// found again when asked for rather than kept: a request carries one Span less.
func (r *Request) RawQuery() Span {
	t := r.Bytes(r.Target)
	if i := bytes.IndexByte(t, '?'); i >= 0 {
		return Span{r.Target.off + uint32(i) + 1, uint32(len(t) - i - 1)}
	}
	return Span{}
}

// Len returns the length of the string s locates.
func (s Span) Len() int { return int(s.n) }

// A Field is one header (or trailer) field: name and value, with surrounding whitespace trimmed.
type Field struct{ Name, Value Span }

// The field table lives in arena bytes at an offset rounded up to 4 (Adopt), which suits a
// Field only while it needs no more than 4-byte alignment: this fails to compile otherwise.
// Adopt checks the arena's own address.
const _ = uint(4 - unsafe.Alignof(Field{}))

// A Request is a parsed request head. Its arena is one pooled buffer sized for it: a copy of the
// head as received (so the loop's read buffer is free again at once), then the table of its
// fields, then scratch space for decoded path and query values. Every value a request hands out
// points into it, so every one is borrowed from it.
type Request struct {
	Arena []byte

	Method, Target, Path Span // the query is found in Target when asked for (RawQuery)

	fieldsOff     uint32 // where the field table starts in the arena
	nfields       uint16
	Minor         uint8 // HTTP/1.minor; 0 or 1
	flags         Flags // what the framing fields say
	ContentLength int64 // -1 when the request has no Content-Length
}

// Flags are the facts the special fields establish, in a byte.
type Flags uint8

const (
	Chunked   Flags = 1 << iota // Transfer-Encoding: chunked
	Expect100                   // Expect: 100-continue
	Close                       // Connection: close
	KeepAlive                   // Connection: keep-alive
	Upgrade                     // Connection: upgrade (a protocol switch may follow)
	escaped                     // the request-target has a '%' or a '+' to decode
)

// Has reports whether the request's framing fields established f.
func (r *Request) Has(f Flags) bool { return r.flags&f != 0 }

// maxFields bounds the header fields of one request (the limit on the head's size bounds them
// too, but this keeps the count in 16 bits).
const maxFields = 1<<16 - 1

// Str returns the arena bytes of s as a string without copying. The string is valid as long as
// the arena is this request's: core copies it (or hands out the bytes as borrowed) before user
// code can keep it, and nothing writes to a head's bytes once it is parsed.
func (r *Request) Str(s Span) string {
	if s.n == 0 {
		return ""
	}
	return unsafe.String(&r.Arena[s.off], int(s.n))
}

// Bytes returns the arena bytes of s, capped so that an append by their holder cannot reach
// the arena's bytes after them.
func (r *Request) Bytes(s Span) []byte {
	if s.n == 0 {
		return nil
	}
	return r.Arena[s.off : s.off+s.n : s.off+s.n]
}

// Fields returns the field table. It lives in the arena, whose bytes hold no pointers, and a
// field holds none either, so viewing those bytes as fields is safe for the collector.
func (r *Request) Fields() []Field {
	if r.nfields == 0 {
		return nil
	}
	return unsafe.Slice((*Field)(unsafe.Pointer(&r.Arena[r.fieldsOff])), r.nfields)
}

// Adopt moves a parsed head into an arena from pool: head (the bytes the spans point into), the
// Fields parsed from it, and room for scratch bytes behind them.
func (r *Request) Adopt(pool *bufpool.Pool, head []byte, fields []Field, scratch int) {
	off := (len(head) + 3) &^ 3 // fields are 4-byte aligned
	need := off + len(fields)*int(unsafe.Sizeof(Field{})) + scratch
	a := bufpool.GetArena(pool, need)[:off+len(fields)*int(unsafe.Sizeof(Field{}))]
	copy(a, head)
	if len(fields) > 0 {
		if uintptr(unsafe.Pointer(&a[off]))%unsafe.Alignof(Field{}) != 0 {
			panic("dwell: request arena misaligned for its field table")
		}
		copy(unsafe.Slice((*Field)(unsafe.Pointer(&a[off])), len(fields)), fields)
	}
	r.Arena = a
	r.fieldsOff = uint32(off)
	r.nfields = uint16(len(fields))
}

// Lookup returns the value of the first field named name (any case).
func (r *Request) Lookup(name string) ([]byte, bool) {
	for _, f := range r.Fields() {
		if int(f.Name.n) == len(name) && syntax.EqualFold(r.Str(f.Name), name) {
			return r.Bytes(f.Value), true
		}
	}
	return nil, false
}

// IsMethod reports whether the request's method is m.
func (r *Request) IsMethod(m string) bool { return string(r.Bytes(r.Method)) == m }

// MethodString returns the method as an owned string: a constant for the standard methods
// (RFC 9110 §9.1 and PATCH), a copy for any other.
func (r *Request) MethodString() string {
	m := r.Bytes(r.Method)
	for _, k := range knownMethods {
		if string(m) == k {
			return k
		}
	}
	return string(m)
}

var knownMethods = [...]string{"GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "CONNECT", "TRACE"}

// AppendScratch copies b after the arena's used bytes and returns its span. When the arena is
// full it returns ok=false and the caller falls back to an allocation; the arena never grows,
// since strings already handed out point into it.
func (r *Request) AppendScratch(b []byte) (Span, bool) {
	if len(r.Arena)+len(b) > cap(r.Arena) {
		return Span{}, false
	}
	off := len(r.Arena)
	r.Arena = append(r.Arena, b...)
	return Span{uint32(off), uint32(len(b))}, true
}
