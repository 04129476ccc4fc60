package wire

import (
	"strings"
	"testing"

	"github.com/dwellhttp/dwell/internal/bufpool"
)

// parseRaw runs the head scanner and parser over one raw request, as the loop does.
func parseRaw(t testing.TB, raw string, max int) (*Request, *Reject) {
	t.Helper()
	in, more := SkipEmptyLines([]byte(raw))
	if more {
		return nil, nil
	}
	var s HeadScan
	n, status := s.Scan(in, max)
	switch {
	case status == 400:
		return nil, ErrRequestLine
	case status == 414:
		return nil, errTooLong
	case status != 0:
		return nil, ErrHeadTooLarge
	case n == ScanMore:
		return nil, nil
	}
	r := &Request{ContentLength: -1, Arena: in[:n]}
	var fields []Field
	// CONNECT is refused by policy (Options.AllowCONNECT), which the wire tests cover; here
	// the parser's own rules are under test.
	if rej := ParseHead(r, &fields, true); rej != nil {
		return nil, rej
	}
	var pool bufpool.Pool
	r.Adopt(&pool, in[:n], fields, r.ScratchNeeded())
	r.DecodePath()
	return r, nil
}

func TestParseValid(t *testing.T) {
	tests := []struct {
		name, raw                       string
		method, target, path, query     string
		host                            string
		minor                           uint8
		contentLength                   int64
		chunked, expect, close, keepAlv bool
		fields                          int
	}{
		{name: "simple", raw: "GET / HTTP/1.1\r\nHost: example.com\r\n\r\n",
			method: "GET", target: "/", path: "/", host: "example.com", minor: 1, contentLength: -1, fields: 1},
		{name: "query", raw: "GET /a/b?x=1&y=2 HTTP/1.1\r\nHost: h\r\n\r\n",
			method: "GET", target: "/a/b?x=1&y=2", path: "/a/b", query: "x=1&y=2", host: "h", minor: 1, contentLength: -1, fields: 1},
		{name: "percent-decoded path", raw: "GET /a%20b/%7Ec HTTP/1.1\r\nHost: h\r\n\r\n",
			method: "GET", target: "/a%20b/%7Ec", path: "/a b/~c", host: "h", minor: 1, contentLength: -1, fields: 1},
		// RFC 9112 §2.2: a server SHOULD ignore at least one empty line before the request-line.
		{name: "leading empty line", raw: "\r\nGET / HTTP/1.1\r\nHost: h\r\n\r\n",
			method: "GET", target: "/", path: "/", host: "h", minor: 1, contentLength: -1, fields: 1},
		// RFC 9112 §3.2: Host is required in 1.1, not in 1.0.
		{name: "HTTP/1.0 without Host", raw: "GET /x HTTP/1.0\r\n\r\n",
			method: "GET", target: "/x", path: "/x", minor: 0, contentLength: -1},
		{name: "1.0 keep-alive", raw: "GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n",
			method: "GET", target: "/", path: "/", minor: 0, contentLength: -1, keepAlv: true, fields: 1},
		// RFC 9110 §6.2: a higher 1.x minor version is served as 1.1.
		{name: "HTTP/1.2", raw: "GET / HTTP/1.2\r\nHost: h\r\n\r\n",
			method: "GET", target: "/", path: "/", host: "h", minor: 1, contentLength: -1, fields: 1},
		{name: "content-length", raw: "POST /u HTTP/1.1\r\nHost: h\r\nContent-Length: 42\r\n\r\n",
			method: "POST", target: "/u", path: "/u", host: "h", minor: 1, contentLength: 42, fields: 2},
		{name: "chunked any case", raw: "POST /u HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: ChunKed\r\n\r\n",
			method: "POST", target: "/u", path: "/u", host: "h", minor: 1, contentLength: -1, chunked: true, fields: 2},
		{name: "expect and close", raw: "PUT /u HTTP/1.1\r\nHost: h\r\nExpect: 100-Continue\r\nConnection: foo, close\r\nContent-Length: 1\r\n\r\n",
			method: "PUT", target: "/u", path: "/u", host: "h", minor: 1, contentLength: 1, expect: true, close: true, fields: 4},
		// RFC 9112 §3.2.2: absolute-form; its authority is the request's host.
		{name: "absolute-form", raw: "GET http://Other.example:8080/p?q=1 HTTP/1.1\r\nHost: h\r\n\r\n",
			method: "GET", target: "http://Other.example:8080/p?q=1", path: "/p", query: "q=1", host: "Other.example:8080", minor: 1, contentLength: -1, fields: 1},
		{name: "absolute-form without path", raw: "GET http://o HTTP/1.1\r\nHost: h\r\n\r\n",
			method: "GET", target: "http://o", path: "/", host: "o", minor: 1, contentLength: -1, fields: 1},
		// RFC 9112 §3.2.4: asterisk-form for OPTIONS.
		{name: "asterisk-form", raw: "OPTIONS * HTTP/1.1\r\nHost: h\r\n\r\n",
			method: "OPTIONS", target: "*", path: "*", host: "h", minor: 1, contentLength: -1, fields: 1},
		// RFC 9112 §3.2.3: authority-form for CONNECT.
		{name: "authority-form", raw: "CONNECT h:443 HTTP/1.1\r\nHost: h:443\r\n\r\n",
			method: "CONNECT", target: "h:443", host: "h:443", minor: 1, contentLength: -1, fields: 1},
		// RFC 9110 §5.5: surrounding whitespace is not part of the value; obs-text is allowed.
		{name: "trimmed value and obs-text", raw: "GET / HTTP/1.1\r\nHost:  h \t\r\nX-A: caf\xc3\xa9\r\nX-Empty:\r\n\r\n",
			method: "GET", target: "/", path: "/", host: "h", minor: 1, contentLength: -1, fields: 3},
		{name: "zero content-length", raw: "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\n\r\n",
			method: "POST", target: "/", path: "/", host: "h", minor: 1, contentLength: 0, fields: 2},
		{name: "extension method", raw: "PROPFIND /d HTTP/1.1\r\nHost: h\r\n\r\n",
			method: "PROPFIND", target: "/d", path: "/d", host: "h", minor: 1, contentLength: -1, fields: 1},
		{name: "empty host, absolute-form", raw: "GET http://h/x HTTP/1.1\r\nHost:\r\n\r\n",
			method: "GET", target: "http://h/x", path: "/x", host: "h", minor: 1, contentLength: -1, fields: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, rej := parseRaw(t, tt.raw, 16<<10)
			if rej != nil {
				t.Fatalf("refused with %d: %s", rej.Status, rej.Reason)
			}
			if r == nil {
				t.Fatal("head reported incomplete")
			}
			check := func(what, got, want string) {
				if got != want {
					t.Errorf("%s = %q, want %q", what, got, want)
				}
			}
			check("method", r.Str(r.Method), tt.method)
			check("target", r.Str(r.Target), tt.target)
			check("path", r.Str(r.Path), tt.path)
			check("query", r.Str(r.RawQuery()), tt.query)
			host := r.Authority()
			if len(host) == 0 {
				host, _ = r.Lookup("host")
			}
			check("host", string(host), tt.host)
			if r.Minor != tt.minor || r.ContentLength != tt.contentLength || r.Has(Chunked) != tt.chunked ||
				r.Has(Expect100) != tt.expect || r.Has(Close) != tt.close || r.Has(KeepAlive) != tt.keepAlv {
				t.Errorf("minor=%d length=%d chunked=%v expect=%v close=%v keepalive=%v", r.Minor, r.ContentLength,
					r.Has(Chunked), r.Has(Expect100), r.Has(Close), r.Has(KeepAlive))
			}
			if len(r.Fields()) != tt.fields {
				t.Errorf("%d fields, want %d", len(r.Fields()), tt.fields)
			}
		})
	}
}

func TestParseFieldValues(t *testing.T) {
	r, rej := parseRaw(t, "GET / HTTP/1.1\r\nHost: h\r\nX-Multi: a\r\nx-multi: b\r\nX-Pad: \t v a l \t\r\n\r\n", 1<<10)
	if rej != nil {
		t.Fatal(rej)
	}
	if v, _ := r.Lookup("X-MULTI"); string(v) != "a" {
		t.Errorf("first X-Multi = %q, want a", v)
	}
	if v, _ := r.Lookup("x-pad"); string(v) != "v a l" {
		t.Errorf("X-Pad = %q, want %q", v, "v a l")
	}
	if _, ok := r.Lookup("missing"); ok {
		t.Error("found a missing field")
	}
}

func TestParseRejects(t *testing.T) {
	big := strings.Repeat("a", 20<<10)
	tests := []struct {
		name, raw string
		status    int
	}{
		// RFC 9112 §3: request line.
		{"missing target", "GET HTTP/1.1\r\nHost: h\r\n\r\n", 400},
		{"double space", "GET  / HTTP/1.1\r\nHost: h\r\n\r\n", 400},
		{"tab separator", "GET\t/ HTTP/1.1\r\nHost: h\r\n\r\n", 400},
		{"bad method byte", "GE(T / HTTP/1.1\r\nHost: h\r\n\r\n", 400},
		{"no version", "GET /\r\nHost: h\r\n\r\n", 400},
		{"lower-case version", "GET / http/1.1\r\nHost: h\r\n\r\n", 400},
		{"version with space", "GET / HTTP/1.1 \r\nHost: h\r\n\r\n", 400},
		{"version two digits", "GET / HTTP/1.10\r\nHost: h\r\n\r\n", 400},
		{"CTL in target", "GET /a\x01b HTTP/1.1\r\nHost: h\r\n\r\n", 400},
		{"DEL in target", "GET /a\x7fb HTTP/1.1\r\nHost: h\r\n\r\n", 400},
		// RFC 9110 §6.2 / RFC 9112 §2.3: only major version 1.
		{"HTTP/2.0", "GET / HTTP/2.0\r\nHost: h\r\n\r\n", 505},
		{"HTTP/0.9", "GET / HTTP/0.9\r\nHost: h\r\n\r\n", 505},
		{"HTTP/3.0", "GET / HTTP/3.0\r\n\r\n", 505},
		// RFC 9112 §3.2: target forms.
		{"asterisk with GET", "GET * HTTP/1.1\r\nHost: h\r\n\r\n", 400},
		{"authority-form with GET", "GET h:80 HTTP/1.1\r\nHost: h\r\n\r\n", 400},
		{"empty host", "GET / HTTP/1.1\r\nHost:\r\n\r\n", 400},
		{"raw UTF-8 in target", "GET /caf\xc3\xa9 HTTP/1.1\r\nHost: h\r\n\r\n", 400},
		{"fragment", "GET /#f HTTP/1.1\r\nHost: h\r\n\r\n", 400},
		{"CONNECT with path", "CONNECT /x HTTP/1.1\r\nHost: h\r\n\r\n", 400},
		{"relative target", "GET a/b HTTP/1.1\r\nHost: h\r\n\r\n", 400},
		{"bad escape", "GET /a%zz HTTP/1.1\r\nHost: h\r\n\r\n", 400},
		{"truncated escape", "GET /a%2 HTTP/1.1\r\nHost: h\r\n\r\n", 400},
		// RFC 9112 §2.2: CRLF line endings; bare LF and bare CR are refused.
		{"bare LF in field", "GET / HTTP/1.1\r\nHost: h\nX: y\r\n\r\n", 400},
		{"bare LF request line", "GET / HTTP/1.1\nHost: h\r\n\r\n", 400},
		{"bare LF everywhere", "GET / HTTP/1.1\nHost: h\n\n", 400},
		{"bare CR in value", "GET / HTTP/1.1\r\nHost: h\r\nX: a\rb\r\n\r\n", 400},
		// RFC 9112 §5.1: no whitespace between field name and colon.
		{"space before colon", "GET / HTTP/1.1\r\nHost : h\r\n\r\n", 400},
		{"tab before colon", "GET / HTTP/1.1\r\nHost\t: h\r\n\r\n", 400},
		{"invalid name byte", "GET / HTTP/1.1\r\nHost: h\r\nX(y): z\r\n\r\n", 400},
		{"empty name", "GET / HTTP/1.1\r\nHost: h\r\n: z\r\n\r\n", 400},
		{"no colon", "GET / HTTP/1.1\r\nHost: h\r\nNoColon\r\n\r\n", 400},
		// RFC 9112 §5.2: obs-fold.
		{"obs-fold", "GET / HTTP/1.1\r\nHost: h\r\nX: a\r\n  b\r\n\r\n", 400},
		// RFC 9110 §5.5: CTLs in values.
		{"NUL in value", "GET / HTTP/1.1\r\nHost: h\r\nX: a\x00b\r\n\r\n", 400},
		{"ESC in value", "GET / HTTP/1.1\r\nHost: h\r\nX: a\x1bb\r\n\r\n", 400},
		{"DEL in value", "GET / HTTP/1.1\r\nHost: h\r\nX: a\x7fb\r\n\r\n", 400},
		// RFC 9112 §3.2: Host.
		{"missing host", "GET / HTTP/1.1\r\n\r\n", 400},
		{"two hosts", "GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400},
		{"two hosts in 1.0", "GET / HTTP/1.0\r\nHost: a\r\nHost: a\r\n\r\n", 400},
		{"host with space", "GET / HTTP/1.1\r\nHost: a b\r\n\r\n", 400},
		{"host with slash", "GET / HTTP/1.1\r\nHost: a/b\r\n\r\n", 400},
		// RFC 9110 §8.6, RFC 9112 §6.3: Content-Length.
		{"CL with sign", "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: +5\r\n\r\n", 400},
		{"CL negative", "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: -5\r\n\r\n", 400},
		{"CL hex", "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 0x10\r\n\r\n", 400},
		{"CL inner space", "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 1 0\r\n\r\n", 400},
		{"CL list", "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 5, 5\r\n\r\n", 400},
		{"CL empty", "POST / HTTP/1.1\r\nHost: h\r\nContent-Length:\r\n\r\n", 400},
		{"CL overflow", "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 99999999999999999999\r\n\r\n", 400},
		{"CL duplicate equal", "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\n", 400},
		{"CL conflicting", "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n", 400},
		// RFC 9112 §6.1, §6.3: Transfer-Encoding.
		{"TE and CL", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n", 400},
		{"CL and TE", "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n", 400},
		{"TE in 1.0", "POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", 400},
		{"chunked not last", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked, gzip\r\n\r\n", 400},
		{"chunked twice", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked, chunked\r\n\r\n", 400},
		{"chunked twice in two fields", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n", 400},
		{"gzip only", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip\r\n\r\n", 400},
		{"empty TE", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding:\r\n\r\n", 400},
		{"chunked with param", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked;q=1\r\n\r\n", 400},
		{"unknown coding first", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", 501},
		{"identity then chunked", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: identity\r\nTransfer-Encoding: chunked\r\n\r\n", 501},
		// RFC 9110 §10.1.1: unknown expectations.
		{"expect other", "GET / HTTP/1.1\r\nHost: h\r\nExpect: 200-ok\r\n\r\n", 417},
		// Limits.
		{"long target", "GET /" + big + " HTTP/1.1\r\nHost: h\r\n\r\n", 414},
		{"long header", "GET / HTTP/1.1\r\nHost: h\r\nX: " + big + "\r\n\r\n", 431},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, rej := parseRaw(t, tt.raw, 16<<10)
			if rej == nil {
				t.Fatalf("accepted; want %d", tt.status)
			}
			if rej.Status != tt.status {
				t.Fatalf("refused with %d (%s), want %d", rej.Status, rej.Reason, tt.status)
			}
		})
	}
}

// TestParseNotHTTP: a request line whose version field is no HTTP version is ErrNotHTTP — which
// a port speaking h2c may close without an answer — only when the line names no HTTP/1.x version
// anywhere, in any case; a line that does is a malformed HTTP/1.x request line and gets its 400.
func TestParseNotHTTP(t *testing.T) {
	tests := []struct {
		name, raw string
		want      *Reject
	}{
		{"h2spec's invalid preface", "INVALID CONNECTION PREFACE\r\n\r\n", ErrNotHTTP},
		{"three words", "GET / X\r\nHost: h\r\n\r\n", ErrNotHTTP},
		{"HTTP/2 named", "GET / XHTTP/2.0\r\nHost: h\r\n\r\n", ErrNotHTTP},
		{"HTTP/1. only in a field", "GET / X\r\nHost: HTTP/1.1\r\n\r\n", ErrNotHTTP},
		{"two spaces", "GET /  HTTP/1.1\r\nHost: h\r\n\r\n", ErrRequestLine},
		{"junk before the method", "Extra lineGET / HTTP/1.1\r\nHost: h\r\n\r\n", ErrRequestLine},
		{"space in the target", "GET /a b HTTP/1.1\r\nHost: h\r\n\r\n", ErrRequestLine},
		{"lower-case name after junk", "GET / x-http/1.1\r\nHost: h\r\n\r\n", ErrRequestLine},
		{"mixed-case name after a space", "GET /  Http/1.0\r\nHost: h\r\n\r\n", ErrRequestLine},
		{"name at the line's very end", "A B C HTTP/1.\r\n\r\n", ErrRequestLine},
		{"lower-case version", "GET / http/1.1\r\nHost: h\r\n\r\n", errVersion},
		{"trailing junk", "GET / HTTP/1.1x\r\nHost: h\r\n\r\n", errVersion},
		{"empty version", "GET / \r\nHost: h\r\n\r\n", errVersion},
		{"no version", "GET /\r\nHost: h\r\n\r\n", ErrRequestLine},
		{"tab before the version", "GET /\tHTTP/1.1\r\nHost: h\r\n\r\n", errTarget},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, rej := parseRaw(t, tt.raw, 16<<10)
			if rej != tt.want {
				t.Fatalf("%q refused with %v, want %v", tt.raw, rej, tt.want)
			}
			if rej.Status != 400 {
				t.Fatalf("%q refused with %d, want 400", tt.raw, rej.Status)
			}
		})
	}
}

// TestScanByteAtATime feeds heads one byte at a time: the scanner must find the same end as in one
// piece and refuse oversized heads before they are complete.
func TestScanByteAtATime(t *testing.T) {
	heads := []string{
		"GET / HTTP/1.1\r\nHost: h\r\n\r\n",
		"POST /x HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n\r\nabc",
		"GET / HTTP/1.1\r\nHost: h\r\nX: \r\n\r\nGET /next HTTP/1.1\r\n",
	}
	for _, h := range heads {
		var whole HeadScan
		want, _ := whole.Scan([]byte(h), 1<<10)
		var s HeadScan
		got := ScanMore
		for i := 1; i <= len(h) && got == ScanMore; i++ {
			got, _ = s.Scan([]byte(h[:i]), 1<<10)
		}
		if got != want || want == ScanMore {
			t.Errorf("%q: byte at a time found %d, whole found %d", h, got, want)
		}
	}
	var s HeadScan
	long := "GET /" + strings.Repeat("x", 100)
	for i := 1; i <= len(long); i++ {
		if _, st := s.Scan([]byte(long[:i]), 64); st != 0 {
			if st != 414 || i != 65 {
				t.Fatalf("status %d after %d bytes, want 414 after 65", st, i)
			}
			return
		}
	}
	t.Fatal("oversized request line never refused")
}

// TestScanLimitEdge: a head at the size limit is refused or not whatever pieces it arrives in —
// its last CR and LF together or apart — and a request line at it likewise, with CRLF or a bare
// LF.
func TestScanLimitEdge(t *testing.T) {
	const max = 64
	scan := func(h string) (n, status int) {
		var whole HeadScan
		n, status = whole.Scan([]byte(h), max)
		var s HeadScan
		n1, status1 := ScanMore, 0
		for i := 1; i <= len(h) && n1 == ScanMore && status1 == 0; i++ {
			n1, status1 = s.Scan([]byte(h[:i]), max)
		}
		if n1 != n || status1 != status {
			t.Errorf("%q: byte at a time (%d, %d), whole (%d, %d)", h, n1, status1, n, status)
		}
		return n, status
	}
	for size := max - 1; size <= max+1; size++ { // the bytes before the final CRLF, or the line's end
		start := "GET / HTTP/1.1\r\nX: "
		head := start + strings.Repeat("v", size-len(start)-2) + "\r\n\r\n"
		if n, status := scan(head); (size > max) != (status == 431) || status == 0 && n != len(head) {
			t.Errorf("a head of %d bytes and its final CRLF: (%d, %d)", size, n, status)
		}
		line := "GET /" + strings.Repeat("x", size-len("GET / HTTP/1.1")) + " HTTP/1.1"
		for _, end := range []string{"\r\n", "\n"} {
			if _, status := scan(line + end); (size > max) != (status == 414) {
				t.Errorf("a request line of %d bytes and %q: status %d", size, end, status)
			}
		}
	}
}

func TestQueryValue(t *testing.T) {
	r, rej := parseRaw(t, "GET /?a=1&b=x+y&c=%41%42&a=2&e&f=&g%20h=i&bad=%zz HTTP/1.1\r\nHost: h\r\n\r\n", 1<<10)
	if rej != nil {
		t.Fatal(rej)
	}
	for _, tt := range []struct {
		key, want string
		ok        bool
	}{
		{"a", "1", true}, {"b", "x y", true}, {"c", "AB", true}, {"e", "", true}, {"f", "", true},
		{"g h", "i", true}, {"bad", "%zz", true}, {"missing", "", false},
	} {
		got, ok := r.QueryValue(tt.key)
		if string(got) != tt.want || ok != tt.ok {
			t.Errorf("query %q = %q, %v; want %q, %v", tt.key, got, ok, tt.want, tt.ok)
		}
	}
}
