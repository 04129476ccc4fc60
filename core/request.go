package core

import "unsafe"

// A span locates a string inside a request's arena: offsets rather than strings so that a parked
// request's field table costs 16 bytes a field, not 32.
type span struct{ off, n uint32 }

// A field is one header (or trailer) field: name and value, with surrounding whitespace trimmed.
type field struct{ name, value span }

// A request is a parsed request head. Its arena holds a copy of the head as received (so the
// loop's read buffer can be reused at once) followed by scratch space for the decoded path and
// query values; every string a Ctx hands out points into it. It is pooled per loop and goes back
// when the handler returns.
type request struct {
	arena   []byte
	headLen int

	method, target, path, rawQuery, host span
	fields                               []field

	minor         uint8 // HTTP/1.minor; 0 or 1
	contentLength int64 // -1 when the request has no Content-Length
	chunked       bool
	expect100     bool
	connClose     bool // Connection: close
	connKeepAlive bool // Connection: keep-alive
}

// str returns the arena bytes of s as a string without copying.
func (r *request) str(s span) string {
	if s.n == 0 {
		return ""
	}
	return unsafe.String(&r.arena[s.off], int(s.n))
}

func (r *request) bytes(s span) []byte { return r.arena[s.off : s.off+s.n] }

// lookup returns the value of the first field named name (any case) in fs.
func (r *request) lookup(fs []field, name string) (string, bool) {
	for _, f := range fs {
		if int(f.name.n) == len(name) && equalFoldString(r.str(f.name), name) {
			return r.str(f.value), true
		}
	}
	return "", false
}

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

func (r *request) reset() {
	*r = request{fields: r.fields[:0]}
}
