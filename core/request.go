package core

import "unsafe"

// A span locates a string inside a request's arena: offsets rather than strings so that the
// request's field table costs 16 bytes a field, not 32.
type span struct{ off, n uint32 }

// A field is one header (or trailer) field: name and value, with surrounding whitespace trimmed.
type field struct{ name, value span }

// A request is a parsed request head. Its arena is one pooled buffer sized for it: a copy of the
// head as received (so the loop's read buffer is free again at once), then the table of its
// fields, then scratch space for decoded path and query values. Every string a Ctx hands out
// points into it.
type request struct {
	arena []byte

	method, target, path, rawQuery span

	fieldsOff     uint32 // where the field table starts in the arena
	nfields       uint16
	minor         uint8    // HTTP/1.minor; 0 or 1
	flags         reqFlags // what the framing fields say
	contentLength int64    // -1 when the request has no Content-Length
}

// reqFlags are the facts the special fields establish, in a byte.
type reqFlags uint8

const (
	reqChunked   reqFlags = 1 << iota // Transfer-Encoding: chunked
	reqExpect100                      // Expect: 100-continue
	reqClose                          // Connection: close
	reqKeepAlive                      // Connection: keep-alive
)

func (r *request) has(f reqFlags) bool { return r.flags&f != 0 }

// maxFields bounds the header fields of one request (the limit on the head's size bounds them
// too, but this keeps the count in 16 bits).
const maxFields = 1<<16 - 1

// str returns the arena bytes of s as a string without copying.
func (r *request) str(s span) string {
	if s.n == 0 {
		return ""
	}
	return unsafe.String(&r.arena[s.off], int(s.n))
}

// bytes returns the arena bytes of s, capped so that an append by their holder cannot reach
// the arena's bytes after them.
func (r *request) bytes(s span) []byte {
	if s.n == 0 {
		return nil
	}
	return r.arena[s.off : s.off+s.n : s.off+s.n]
}

// fields returns the field table. It lives in the arena, whose bytes hold no pointers, and a
// field holds none either, so viewing those bytes as fields is safe for the collector.
func (r *request) fields() []field {
	if r.nfields == 0 {
		return nil
	}
	return unsafe.Slice((*field)(unsafe.Pointer(&r.arena[r.fieldsOff])), r.nfields)
}

// adopt moves a parsed head into an arena from pool: head (the bytes the spans point into), the
// fields parsed from it, and room for scratch bytes behind them.
func (r *request) adopt(pool *bufPool, head []byte, fields []field, scratch int) {
	off := (len(head) + 3) &^ 3 // fields are 4-byte aligned
	need := off + len(fields)*int(unsafe.Sizeof(field{})) + scratch
	a := getArena(pool, need)[:off+len(fields)*int(unsafe.Sizeof(field{}))]
	copy(a, head)
	if len(fields) > 0 {
		copy(unsafe.Slice((*field)(unsafe.Pointer(&a[off])), len(fields)), fields)
	}
	r.arena = a
	r.fieldsOff = uint32(off)
	r.nfields = uint16(len(fields))
}

// lookup returns the value of the first field named name (any case).
func (r *request) lookup(name string) ([]byte, bool) {
	for _, f := range r.fields() {
		if int(f.name.n) == len(name) && equalFoldString(r.str(f.name), name) {
			return r.bytes(f.value), true
		}
	}
	return nil, false
}

// isMethod reports whether the request's method is m.
func (r *request) isMethod(m string) bool { return string(r.bytes(r.method)) == m }

// methodString returns the method as an owned string: a constant for the standard methods
// (RFC 9110 §9.1 and PATCH), a copy for any other.
func (r *request) methodString() string {
	m := r.bytes(r.method)
	for _, k := range knownMethods {
		if string(m) == k {
			return k
		}
	}
	return string(m)
}

var knownMethods = [...]string{"GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "CONNECT", "TRACE"}

// appendScratch copies b after the arena's used bytes and returns its span. When the arena is
// full it returns ok=false and the caller falls back to an allocation; the arena never grows,
// since strings already handed out point into it.
func (r *request) appendScratch(b []byte) (span, bool) {
	if len(r.arena)+len(b) > cap(r.arena) {
		return span{}, false
	}
	off := len(r.arena)
	r.arena = append(r.arena, b...)
	return span{uint32(off), uint32(len(b))}, true
}
