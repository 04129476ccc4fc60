package wire

import "github.com/dwellhttp/dwell/internal/syntax"

// framing collects, while the fields are parsed, what the special fields say about the message:
// Host, Content-Length, Transfer-Encoding, Connection and Expect.
type framing struct {
	hosts        int
	hostField    Span
	lengths      int
	te           bool
	teChunked    bool // a "chunked" coding was seen
	teLastChunk  bool // the last coding seen is "chunked"
	teTwice      bool
	teUnknown    bool
	teNotLast    bool // a coding came after "chunked"
	expectFailed bool
	hostOptional bool // HTTP/2: a request may have no authority at all (RFC 9113 §8.3.1)
}

// note records f if it is one of the special fields.
func (fr *framing) note(r *Request, f Field) *Reject {
	name := r.Bytes(f.Name)
	value := r.Bytes(f.Value)
	switch len(name) {
	case 4:
		if syntax.EqualLower(name, "host") {
			fr.hosts++
			fr.hostField = f.Value
		}
	case 6:
		if syntax.EqualLower(name, "expect") {
			// RFC 9110 §10.1.1: 100-continue is the only expectation defined; a server MAY answer
			// 417 to any other.
			switch {
			case len(value) == 0:
			case syntax.EqualLower(value, "100-continue"):
				r.flags |= Expect100
			default:
				fr.expectFailed = true
			}
		}
	case 10:
		if syntax.EqualLower(name, "connection") {
			forEachElement(value, func(opt []byte) {
				switch {
				case syntax.EqualLower(opt, "close"):
					r.flags |= Close
				case syntax.EqualLower(opt, "keep-alive"):
					r.flags |= KeepAlive
				case syntax.EqualLower(opt, "upgrade"):
					r.flags |= Upgrade
				}
			})
		}
	case 14:
		if syntax.EqualLower(name, "content-length") {
			return fr.contentLength(r, value)
		}
	case 17:
		if syntax.EqualLower(name, "transfer-encoding") {
			fr.te = true
			forEachElement(value, fr.coding)
		}
	}
	return nil
}

// contentLength parses Content-Length = 1*DIGIT (RFC 9110 §8.6). A sign, a space inside, hex, a
// list, or more digits than fit in an int64 is invalid; RFC 9112 §6.3 rule 5 makes any invalid
// Content-Length unrecoverable (400 and close). A second Content-Length field is refused even
// when equal: two parsers that disagree on which one counts is the smuggling this prevents.
func (fr *framing) contentLength(r *Request, v []byte) *Reject {
	fr.lengths++
	if fr.lengths > 1 {
		return errContentLengthDup
	}
	n, ok := syntax.ParseContentLength(v)
	if !ok {
		return errContentLength
	}
	r.ContentLength = n
	return nil
}

// coding records one transfer coding, in order (RFC 9112 §6.1).
func (fr *framing) coding(c []byte) {
	if syntax.EqualLower(c, "chunked") {
		if fr.teChunked {
			fr.teTwice = true
		}
		fr.teChunked = true
		fr.teLastChunk = true
		return
	}
	if fr.teChunked {
		fr.teNotLast = true
	}
	fr.teUnknown = true
	fr.teLastChunk = false
}

// apply checks the collected fields against each other and sets r's framing.
func (fr *framing) apply(r *Request) *Reject {
	// RFC 9112 §3.2: a server MUST respond 400 to an HTTP/1.1 request that lacks a Host field and
	// to any request with more than one.
	if fr.hosts > 1 {
		return errHostMany
	}
	if fr.hosts == 0 && r.Minor == 1 && !fr.hostOptional {
		return errHostMissing
	}
	if fr.hosts == 1 {
		for _, c := range r.Bytes(fr.hostField) {
			if !isHostByte[c] {
				return errHost
			}
		}
	}
	// RFC 9112 §3.2 and RFC 9110 §4.2.1: an origin-form (or asterisk-form) target takes its
	// Authority from Host, and an http URI with an empty host is invalid.
	if fr.hosts == 1 && fr.hostField.n == 0 {
		if t := r.Bytes(r.Target); t[0] == '/' || len(t) == 1 && t[0] == '*' {
			return errHostEmpty
		}
	}
	if fr.te {
		// RFC 9112 §6.1: an HTTP/1.0 message with Transfer-Encoding has faulty framing.
		if r.Minor == 0 {
			return errTEInHTTP10
		}
		// RFC 9112 §6.1: a server MAY reject a request with both Transfer-Encoding and
		// Content-Length, and ought to handle it as an error; we always do.
		if fr.lengths > 0 {
			return errTEAndCL
		}
		// RFC 9112 §6.3 rule 4: chunked must be the final coding, else the length cannot be
		// known: 400. RFC 9112 §7: chunked MUST NOT be applied twice.
		if !fr.teLastChunk || fr.teNotLast {
			return errTENotChunked
		}
		if fr.teTwice {
			return errTEChunkedTwice
		}
		// RFC 9112 §6.1: a coding the server does not understand SHOULD be answered 501.
		if fr.teUnknown {
			return errTEUnknown
		}
		r.flags |= Chunked
	}
	if fr.expectFailed {
		return errExpect
	}
	// RFC 9110 §10.1.1: a server MUST ignore 100-continue in an HTTP/1.0 request.
	if r.Minor == 0 {
		r.flags &^= Expect100
	}
	return parseTarget(r)
}

// forEachElement calls f for each non-empty element of a comma-separated list (RFC 9110 §5.6.1),
// trimmed of whitespace. Empty elements are skipped, as the RFC requires of recipients.
func forEachElement(v []byte, f func([]byte)) {
	for len(v) > 0 {
		i := 0
		for i < len(v) && v[i] != ',' {
			i++
		}
		if e := trimOWS(v[:i]); len(e) > 0 {
			f(e)
		}
		if i == len(v) {
			return
		}
		v = v[i+1:]
	}
}
