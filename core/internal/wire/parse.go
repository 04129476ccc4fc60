package wire

import "github.com/dwellhttp/dwell/internal/syntax"

// A Reject is a request the server refuses before any handler runs: the status to answer with
// and a short reason for the response body and the log. The connection closes after it.
type Reject struct {
	Status int
	Reason string
}

func (r *Reject) Error() string { return "dwell: request refused: " + r.Reason }

// Rejects share these values so that refusing a request allocates nothing.
var (
	ErrRequestLine      = &Reject{400, "malformed request line"}
	errMethod           = &Reject{400, "invalid method"}
	errTarget           = &Reject{400, "invalid request-target"}
	errVersion          = &Reject{400, "malformed HTTP version"}
	ErrNotHTTP          = &Reject{400, "request line names no HTTP/1.x version"}
	errVersionSupported = &Reject{505, "HTTP version not supported"}
	errLineEnding       = &Reject{400, "line not ended by CRLF"}
	errObsFold          = &Reject{400, "obsolete line folding"}
	errFieldName        = &Reject{400, "invalid header field name"}
	errFieldValue       = &Reject{400, "invalid header field value"}
	errHostMissing      = &Reject{400, "missing Host header"}
	errHostMany         = &Reject{400, "more than one Host header"}
	errHost             = &Reject{400, "invalid Host header"}
	errContentLength    = &Reject{400, "invalid Content-Length"}
	errContentLengthDup = &Reject{400, "more than one Content-Length"}
	errTEAndCL          = &Reject{400, "both Transfer-Encoding and Content-Length"}
	errTEInHTTP10       = &Reject{400, "Transfer-Encoding in an HTTP/1.0 request"}
	errTENotChunked     = &Reject{400, "chunked is not the final transfer coding"}
	errTEChunkedTwice   = &Reject{400, "chunked applied more than once"}
	errTEUnknown        = &Reject{501, "transfer coding not implemented"}
	errExpect           = &Reject{417, "unsupported expectation"}
	errPercent          = &Reject{400, "invalid percent-encoding in path"}
	errTooLong          = &Reject{414, "request-target too long"}
	errMethodTooLong    = &Reject{400, "request line over the size limit, in its method"}
	errConnect          = &Reject{501, "CONNECT not implemented"}
	errHostEmpty        = &Reject{400, "empty Host header"}
	ErrHeadTooLarge     = &Reject{431, "request header fields too large"}
	ErrHeaderTimeout    = &Reject{408, "request header timeout"}
)

// ParseHead parses the complete head in r.Arena (which holds exactly the head) into r: the
// request line, the framing the fields imply, and the fields themselves, appended to *fields.
// Every rule cites RFC 9112 (or 9110) because each closes a way for two parsers to disagree on
// where a request ends.
func ParseHead(r *Request, fields *[]Field, allowConnect bool) *Reject {
	b := r.Arena
	i, rej := parseRequestLine(r, b)
	if rej != nil {
		return rej
	}
	var f framing
	for {
		// RFC 9112 §2.2: lines end in CRLF; we do not accept a bare LF (a recipient MAY, but
		// proxies that disagree are how requests get smuggled).
		if b[i] == '\r' && b[i+1] == '\n' {
			break
		}
		var fl Field
		fl, i, rej = parseField(b, i)
		if rej != nil {
			return rej
		}
		if len(*fields) == maxFields {
			return ErrHeadTooLarge
		}
		*fields = append(*fields, fl)
		if rej = f.note(r, fl); rej != nil {
			return rej
		}
	}
	if rej := f.apply(r); rej != nil {
		return rej
	}
	// dwell is no proxy: a CONNECT names a tunnel it would not open (RFC 9110 §9.3.6).
	if !allowConnect && r.IsMethod("CONNECT") {
		return errConnect
	}
	return nil
}

// LineTooLong classifies a request line over the head's size limit max, of which line holds
// the start: 414 when the request-target is what is long; 400 when the method is (RFC 9112
// §3: a line that long in its first token is malformed, not a request for a method the server
// lacks, which would be 501), or when the line is malformed before that.
func LineTooLong(line []byte, max int) *Reject {
	i := 0
	for i < len(line) && syntax.IsTchar[line[i]] {
		i++
	}
	switch {
	case i == len(line) || i > max:
		return errMethodTooLong
	case line[i] != ' ' || i == 0:
		return errMethod
	}
	return errTooLong
}

// parseRequestLine parses method SP request-target SP HTTP-version CRLF (RFC 9112 §3) and returns
// the offset of the first field line.
func parseRequestLine(r *Request, b []byte) (int, *Reject) {
	i := 0
	for syntax.IsTchar[b[i]] {
		i++
	}
	// RFC 9112 §3: a single SP separates the parts; method is a token (RFC 9110 §9.1).
	if i == 0 || b[i] != ' ' {
		if i == 0 || b[i] == '\r' || b[i] == '\n' {
			return 0, ErrRequestLine
		}
		return 0, errMethod
	}
	r.Method = Span{0, uint32(i)}
	i++
	start := i
	var class uint8
	for targetClass[b[i]] != 0 {
		class |= targetClass[b[i]]
		i++
	}
	if class&targetEscape != 0 {
		r.flags |= escaped
	}
	// RFC 9112 §3.2: the request-target has no whitespace or CTLs; a bare CR, a second space or a
	// missing version is a malformed line.
	if i == start || b[i] != ' ' {
		if i == start || b[i] == '\r' || b[i] == '\n' {
			return 0, ErrRequestLine
		}
		return 0, errTarget
	}
	r.Target = Span{uint32(start), uint32(i - start)}
	i++
	// RFC 9112 §2.3: HTTP-version = "HTTP" "/" DIGIT "." DIGIT, case-sensitive.
	v := b[i:]
	if len(v) >= 5 && v[0] != '\r' && v[0] != '\n' && !equalFoldPrefix(v, "http/") {
		// A version field that is there but no version. A line that still names HTTP/1.x
		// somewhere is a malformed request line (a second space, junk before the method, a
		// space in the target), whose client reads the 400; only one that names none cannot be
		// HTTP/1.x at all (a damaged HTTP/2 preface, say): see conn.reject. (An empty version
		// field is a line cut short: malformed HTTP version, below.)
		if namesHTTP1(b) {
			return 0, ErrRequestLine
		}
		return 0, ErrNotHTTP
	}
	if len(v) < 10 || string(v[:5]) != "HTTP/" || !isDigit(v[5]) || v[6] != '.' || !isDigit(v[7]) {
		return 0, errVersion
	}
	if v[8] != '\r' || v[9] != '\n' {
		if v[8] == '\n' {
			return 0, errLineEnding
		}
		return 0, errVersion
	}
	// RFC 9110 §6.2: only major version 1 is ours; a higher 1.x minor is served as 1.1.
	if v[5] != '1' {
		return 0, errVersionSupported
	}
	if v[7] != '0' {
		r.Minor = 1
	}
	return i + 10, nil
}

// parseField parses one field line (RFC 9112 §5) starting at i and returns the offset of the next.
func parseField(b []byte, i int) (Field, int, *Reject) {
	// RFC 9112 §5.2: obs-fold is rejected with 400 rather than unfolded.
	if b[i] == ' ' || b[i] == '\t' {
		return Field{}, 0, errObsFold
	}
	if b[i] == '\n' || b[i] == '\r' {
		return Field{}, 0, errLineEnding
	}
	start := i
	for syntax.IsTchar[b[i]] {
		i++
	}
	// RFC 9112 §5.1: no whitespace is allowed between the field name and colon; a server MUST
	// reject such a request with 400. Any non-token byte in the name is likewise invalid.
	if i == start || b[i] != ':' {
		return Field{}, 0, errFieldName
	}
	name := Span{uint32(start), uint32(i - start)}
	i++
	for b[i] == ' ' || b[i] == '\t' {
		i++
	}
	vstart := i
	for syntax.IsValueByte[b[i]] {
		i++
	}
	// RFC 9110 §5.5: CR, LF and NUL are never allowed in a field value; RFC 9112 §2.2: a bare CR
	// is invalid.
	if b[i] != '\r' || b[i+1] != '\n' {
		if b[i] == '\n' {
			return Field{}, 0, errLineEnding
		}
		return Field{}, 0, errFieldValue
	}
	end := i
	for end > vstart && (b[end-1] == ' ' || b[end-1] == '\t') {
		end--
	}
	return Field{name, Span{uint32(vstart), uint32(end - vstart)}}, i + 2, nil
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// namesHTTP1 reports whether the request line at the start of b (which holds a whole head, so
// an LF ends the line) contains "HTTP/1.", in any case.
func namesHTTP1(b []byte) bool {
	const name = "http/1."
	for i := 0; i+len(name) <= len(b) && b[i] != '\n'; i++ {
		if equalFoldPrefix(b[i:], name) {
			return true
		}
	}
	return false
}
