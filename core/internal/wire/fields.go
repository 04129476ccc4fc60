package wire

import "github.com/dwellhttp/dwell/internal/syntax"

// Heads that arrive as fields rather than as text: HTTP/2's field blocks, decoded by HPACK. A
// HeadBuilder gathers the method, the target and the fields into one buffer as they are decoded,
// and Finish makes a Request of them that reads as a parsed HTTP/1.1 head does — the same spans,
// the same field table, the same framing facts — so that what serves a request need not know
// how its head arrived.

// A HeadBuilder assembles one request head. Its buffer and field slice are the caller's (the
// loop's scratch), reused from head to head; Finish adopts nothing, the caller copies the head
// into an arena (Request.Adopt) as it does a parsed one.
type HeadBuilder struct {
	Buf    []byte
	Fields []Field

	method, target, authority Span
	hasAuthority              bool
}

// Reset starts a new head in buf and fields (emptied).
func (b *HeadBuilder) Reset(buf []byte, fields []Field) {
	*b = HeadBuilder{Buf: buf[:0], Fields: fields[:0]}
}

func (b *HeadBuilder) add(v []byte) Span {
	off := len(b.Buf)
	b.Buf = append(b.Buf, v...)
	return Span{uint32(off), uint32(len(v))}
}

// Method records the request's method (HTTP/2's :method).
func (b *HeadBuilder) Method(v []byte) { b.method = b.add(v) }

// Target records the request-target (HTTP/2's :path; the authority of a CONNECT).
func (b *HeadBuilder) Target(v []byte) { b.target = b.add(v) }

// Authority records the target URI's authority (HTTP/2's :authority), which serves as Host.
func (b *HeadBuilder) Authority(v []byte) {
	b.authority = b.add(v)
	b.hasAuthority = true
}

// Field records a header field. It reports false when the head has as many fields as a request
// may have.
func (b *HeadBuilder) Field(name, value []byte) bool {
	if len(b.Fields) == maxFields-1 { // one is kept for the authority's Host
		return false
	}
	b.Fields = append(b.Fields, Field{b.add(name), b.add(value)})
	return true
}

// Size is how many bytes of names and values the head holds so far.
func (b *HeadBuilder) Size() int { return len(b.Buf) }

// Finish makes r the request the builder holds: r.Arena is b.Buf (the caller adopts it), and
// the framing fields are checked as ParseHead checks them. The authority stands for Host (RFC
// 9113 §8.3.1): a Host field beside it must name the same, and is then the one Host kept; with
// neither, the request has no Host, which HTTP/2 allows. A request is HTTP/1.1 for everything
// its Minor decides.
func (b *HeadBuilder) Finish(r *Request, allowConnect bool) *Reject {
	*r = Request{Arena: b.Buf, Method: b.method, Target: b.target, Minor: 1, ContentLength: -1}
	if b.hasAuthority {
		host := -1
		for i, f := range b.Fields {
			if f.Name.n == 4 && syntax.EqualLower(r.Bytes(f.Name), "host") {
				host = i
				break
			}
		}
		switch {
		case host < 0:
			b.Fields = append(b.Fields, Field{b.add([]byte("host")), b.authority})
			r.Arena = b.Buf
		case string(r.Bytes(b.Fields[host].Value)) != string(r.Bytes(b.authority)):
			return errAuthorityHost
		}
	}
	var class uint8
	for _, c := range r.Bytes(r.Target) {
		if targetClass[c] == 0 {
			return errTarget
		}
		class |= targetClass[c]
	}
	if class&targetEscape != 0 {
		r.flags |= escaped
	}
	if r.Target.n == 0 {
		return errTarget
	}
	fr := framing{hostOptional: true}
	for _, f := range b.Fields {
		if rej := fr.note(r, f); rej != nil {
			return rej
		}
	}
	if rej := fr.apply(r); rej != nil {
		return rej
	}
	if !allowConnect && r.IsMethod("CONNECT") {
		return errConnect
	}
	return nil
}

var errAuthorityHost = &Reject{400, "Host differs from :authority"}
