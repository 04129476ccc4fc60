package core

// A reject is a request the server refuses before any handler runs: the status to answer with
// and a short reason for the response body and the log. The connection closes after it.
type reject struct {
	status int
	reason string
}

func (r *reject) Error() string { return "dwell: request refused: " + r.reason }

// Rejects share these values so that refusing a request allocates nothing.
var (
	errRequestLine      = &reject{400, "malformed request line"}
	errMethod           = &reject{400, "invalid method"}
	errTarget           = &reject{400, "invalid request-target"}
	errVersion          = &reject{400, "malformed HTTP version"}
	errVersionSupported = &reject{505, "HTTP version not supported"}
	errLineEnding       = &reject{400, "line not ended by CRLF"}
	errObsFold          = &reject{400, "obsolete line folding"}
	errFieldName        = &reject{400, "invalid header field name"}
	errFieldValue       = &reject{400, "invalid header field value"}
	errHostMissing      = &reject{400, "missing Host header"}
	errHostMany         = &reject{400, "more than one Host header"}
	errHost             = &reject{400, "invalid Host header"}
	errContentLength    = &reject{400, "invalid Content-Length"}
	errContentLengthDup = &reject{400, "more than one Content-Length"}
	errTEAndCL          = &reject{400, "both Transfer-Encoding and Content-Length"}
	errTEInHTTP10       = &reject{400, "Transfer-Encoding in an HTTP/1.0 request"}
	errTENotChunked     = &reject{400, "chunked is not the final transfer coding"}
	errTEChunkedTwice   = &reject{400, "chunked applied more than once"}
	errTEUnknown        = &reject{501, "transfer coding not implemented"}
	errExpect           = &reject{417, "unsupported expectation"}
	errPercent          = &reject{400, "invalid percent-encoding in path"}
	errTooLong          = &reject{414, "request-target too long"}
	errMethodTooLong    = &reject{501, "method not implemented (too long)"}
	errConnect          = &reject{501, "CONNECT not implemented"}
	errHostEmpty        = &reject{400, "empty Host header"}
	errHeadTooLarge     = &reject{431, "request header fields too large"}
	errHeaderTimeout    = &reject{408, "request header timeout"}
)

// parseHead parses the complete head in r.arena (which holds exactly the head) into r: the
// request line, the framing the fields imply, and the fields themselves, appended to *fields.
// Every rule cites RFC 9112 (or 9110) because each closes a way for two parsers to disagree on
// where a request ends.
func parseHead(r *request, fields *[]field, allowConnect bool) *reject {
	b := r.arena
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
		var fl field
		fl, i, rej = parseField(b, i)
		if rej != nil {
			return rej
		}
		if len(*fields) == maxFields {
			return errHeadTooLarge
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
	if !allowConnect && r.isMethod("CONNECT") {
		return errConnect
	}
	return nil
}

// lineTooLong classifies a request line over the head's size limit max, of which line holds
// the start: 414 when the request-target is what is long, 501 when the method is (no method
// that long is implemented), 400 when the line is malformed before that.
func lineTooLong(line []byte, max int) *reject {
	i := 0
	for i < len(line) && isTchar[line[i]] {
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
func parseRequestLine(r *request, b []byte) (int, *reject) {
	i := 0
	for isTchar[b[i]] {
		i++
	}
	// RFC 9112 §3: a single SP separates the parts; method is a token (RFC 9110 §9.1).
	if i == 0 || b[i] != ' ' {
		if i == 0 || b[i] == '\r' || b[i] == '\n' {
			return 0, errRequestLine
		}
		return 0, errMethod
	}
	r.method = span{0, uint32(i)}
	i++
	start := i
	for isTargetByte[b[i]] {
		i++
	}
	// RFC 9112 §3.2: the request-target has no whitespace or CTLs; a bare CR, a second space or a
	// missing version is a malformed line.
	if i == start || b[i] != ' ' {
		if i == start || b[i] == '\r' || b[i] == '\n' {
			return 0, errRequestLine
		}
		return 0, errTarget
	}
	r.target = span{uint32(start), uint32(i - start)}
	i++
	// RFC 9112 §2.3: HTTP-version = "HTTP" "/" DIGIT "." DIGIT, case-sensitive.
	v := b[i:]
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
		r.minor = 1
	}
	return i + 10, nil
}

// parseField parses one field line (RFC 9112 §5) starting at i and returns the offset of the next.
func parseField(b []byte, i int) (field, int, *reject) {
	// RFC 9112 §5.2: obs-fold is rejected with 400 rather than unfolded.
	if b[i] == ' ' || b[i] == '\t' {
		return field{}, 0, errObsFold
	}
	if b[i] == '\n' || b[i] == '\r' {
		return field{}, 0, errLineEnding
	}
	start := i
	for isTchar[b[i]] {
		i++
	}
	// RFC 9112 §5.1: no whitespace is allowed between the field name and colon; a server MUST
	// reject such a request with 400. Any non-token byte in the name is likewise invalid.
	if i == start || b[i] != ':' {
		return field{}, 0, errFieldName
	}
	name := span{uint32(start), uint32(i - start)}
	i++
	for b[i] == ' ' || b[i] == '\t' {
		i++
	}
	vstart := i
	for isValueByte[b[i]] {
		i++
	}
	// RFC 9110 §5.5: CR, LF and NUL are never allowed in a field value; RFC 9112 §2.2: a bare CR
	// is invalid.
	if b[i] != '\r' || b[i+1] != '\n' {
		if b[i] == '\n' {
			return field{}, 0, errLineEnding
		}
		return field{}, 0, errFieldValue
	}
	end := i
	for end > vstart && (b[end-1] == ' ' || b[end-1] == '\t') {
		end--
	}
	return field{name, span{uint32(vstart), uint32(end - vstart)}}, i + 2, nil
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }
