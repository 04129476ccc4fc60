package core

import (
	"bytes"
	"io"
	"net/http/httputil"
	"testing"
)

// FuzzParseHead: the scanner and parser never panic, agree with themselves when the head arrives
// a byte at a time, and only accept heads whose parts are where the parser says.
func FuzzParseHead(f *testing.F) {
	f.Add([]byte("GET / HTTP/1.1\r\nHost: h\r\n\r\n"))
	f.Add([]byte("POST /a%20b?x=1 HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n"))
	f.Add([]byte("GET http://h:1/p HTTP/1.0\r\nConnection: keep-alive\r\n\r\n"))
	f.Fuzz(func(t *testing.T, raw []byte) {
		const max = 1 << 10
		in, more := skipEmptyLines(raw)
		if more {
			return
		}
		var whole headScan
		n, status := whole.scan(in, max)
		var step headScan
		n1, status1 := scanMore, 0
		for i := 1; i <= len(in) && n1 == scanMore && status1 == 0; i++ {
			n1, status1 = step.scan(in[:i], max)
		}
		if len(in) > 0 && (n1 != n || status1 != status) {
			t.Fatalf("byte at a time: (%d, %d), whole: (%d, %d)", n1, status1, n, status)
		}
		if n == scanMore || status != 0 {
			return
		}
		r := &request{contentLength: -1, arena: in[:n]}
		var fields []field
		if rej := parseHead(r, &fields, false); rej != nil {
			if rej.status < 400 || rej.status > 505 {
				t.Fatalf("reject status %d", rej.status)
			}
			return
		}
		var pool bufPool
		r.adopt(&pool, in[:n], fields, r.scratchNeeded())
		r.decodePath()
		if !bytes.HasPrefix(in, r.bytes(r.method)) || r.method.n == 0 {
			t.Fatalf("method %q", r.bytes(r.method))
		}
		if r.has(reqChunked) && r.contentLength >= 0 {
			t.Fatal("accepted both chunked and a Content-Length")
		}
		for _, fl := range r.fields() {
			for _, c := range r.bytes(fl.name) {
				if !isTchar[c] {
					t.Fatalf("field name %q", r.bytes(fl.name))
				}
			}
			for _, c := range r.bytes(fl.value) {
				if !isValueByte[c] {
					t.Fatalf("field value %q", r.bytes(fl.value))
				}
			}
		}
		r.queryValue("a")
	})
}

// FuzzChunked: the chunked decoder never panics, decodes the same body whatever the piece sizes,
// and agrees with net/http's chunked reader on every body it accepts.
func FuzzChunked(f *testing.F) {
	f.Add([]byte("5\r\nhello\r\n0\r\n\r\n"), uint8(1))
	f.Add([]byte("3;x=y\r\nabc\r\n0\r\nT: v\r\n\r\n"), uint8(2))
	f.Fuzz(func(t *testing.T, in []byte, step uint8) {
		whole, _, errWhole := decodeAll(string(in), len(in)+1, 4096, 0)
		pieces, _, errPieces := decodeAll(string(in), int(step%7)+1, int(step%5)+1, 0)
		if (errWhole == io.EOF) != (errPieces == io.EOF) || !bytes.Equal(whole, pieces) {
			t.Fatalf("whole: %q %v; in pieces: %q %v", whole, errWhole, pieces, errPieces)
		}
		if errWhole != io.EOF {
			return
		}
		theirs, err := io.ReadAll(httputil.NewChunkedReader(bytes.NewReader(in)))
		if err != nil {
			// RFC 9112 §7.1.1 allows whitespace (BWS) before a chunk extension; net/http does not.
			if bytes.Contains(in, []byte(" ;")) || bytes.Contains(in, []byte("\t;")) {
				return
			}
			t.Fatalf("accepted %q; net/http: %v", in, err)
		}
		if !bytes.Equal(whole, theirs) {
			t.Fatalf("ours %q, net/http %q", whole, theirs)
		}
	})
}
