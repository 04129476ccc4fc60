package wire

import (
	"bytes"
	"io"
	"net/http/httputil"
	"testing"

	"github.com/dwellhttp/dwell/internal/syntax"

	"github.com/dwellhttp/dwell/internal/bufpool"
)

// FuzzParseHead: the scanner and parser never panic, agree with themselves when the head arrives
// a byte at a time, and only accept heads whose parts are where the parser says.
func FuzzParseHead(f *testing.F) {
	f.Add([]byte("GET / HTTP/1.1\r\nHost: h\r\n\r\n"))
	f.Add([]byte("POST /a%20b?x=1 HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n"))
	f.Add([]byte("GET http://h:1/p HTTP/1.0\r\nConnection: keep-alive\r\n\r\n"))
	f.Fuzz(func(t *testing.T, raw []byte) {
		const max = 1 << 10
		in, more := SkipEmptyLines(raw)
		if more {
			return
		}
		var whole HeadScan
		n, status := whole.Scan(in, max)
		var step HeadScan
		n1, status1 := ScanMore, 0
		for i := 1; i <= len(in) && n1 == ScanMore && status1 == 0; i++ {
			n1, status1 = step.Scan(in[:i], max)
		}
		if len(in) > 0 && (n1 != n || status1 != status) {
			t.Fatalf("byte at a time: (%d, %d), whole: (%d, %d)", n1, status1, n, status)
		}
		if n == ScanMore || status != 0 {
			return
		}
		r := &Request{ContentLength: -1, Arena: in[:n]}
		var fields []Field
		if rej := ParseHead(r, &fields, false); rej != nil {
			if rej.Status < 400 || rej.Status > 505 {
				t.Fatalf("reject status %d", rej.Status)
			}
			// Only a line naming no HTTP/1.x version may go unanswered (conn.reject).
			line, _, _ := bytes.Cut(in[:n], []byte("\n"))
			if rej == ErrNotHTTP && bytes.Contains(bytes.ToLower(line), []byte("http/1.")) {
				t.Fatalf("%q, which names HTTP/1.x, refused as not HTTP", line)
			}
			return
		}
		var pool bufpool.Pool
		r.Adopt(&pool, in[:n], fields, r.ScratchNeeded())
		r.DecodePath()
		if !bytes.HasPrefix(in, r.Bytes(r.Method)) || r.Method.n == 0 {
			t.Fatalf("method %q", r.Bytes(r.Method))
		}
		if r.Has(Chunked) && r.ContentLength >= 0 {
			t.Fatal("accepted both chunked and a Content-Length")
		}
		for _, fl := range r.Fields() {
			for _, c := range r.Bytes(fl.Name) {
				if !syntax.IsTchar[c] {
					t.Fatalf("field name %q", r.Bytes(fl.Name))
				}
			}
			for _, c := range r.Bytes(fl.Value) {
				if !syntax.IsValueByte[c] {
					t.Fatalf("field value %q", r.Bytes(fl.Value))
				}
			}
		}
		r.QueryValue("a")
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
