package wire

import (
	"bytes"
	"errors"
	"io"
	"net/http/httputil"
	"strings"
	"testing"
)

// decodeAll runs the decoder over in, fed step bytes at a time and read into buffers of readSize,
// and returns the body, the trailer section and the error that ended it (io.EOF when complete).
func decodeAll(in string, step, readSize int, max int64) (body, trailer []byte, err error) {
	var d ChunkedDecoder
	d.Reset(max)
	buf := make([]byte, readSize)
	src := []byte(in)
	for fed := 0; ; {
		end := min(fed+step, len(src))
		pending := src[fed:end]
		for {
			nd, ns, e := d.Decode(buf, pending)
			body = append(body, buf[:nd]...)
			pending = pending[ns:]
			if e != nil {
				return body, d.trailer, e
			}
			if len(pending) == 0 || ns == 0 && nd == 0 {
				break
			}
		}
		if end == len(src) {
			return body, d.trailer, io.ErrUnexpectedEOF
		}
		fed = end - len(pending)
	}
}

func TestChunkedValid(t *testing.T) {
	tests := []struct{ name, in, body, trailer string }{
		{"one chunk", "5\r\nhello\r\n0\r\n\r\n", "hello", ""},
		{"two chunks", "5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n", "hello world", ""},
		{"empty body", "0\r\n\r\n", "", ""},
		{"hex upper and lower", "A\r\n0123456789\r\na\r\n0123456789\r\n0\r\n\r\n", "01234567890123456789", ""},
		{"leading zeros", "0005\r\nhello\r\n000\r\n\r\n", "hello", ""},
		// RFC 9112 §7.1.1: extensions are ignored.
		{"extensions", "5;name=value;flag\r\nhello\r\n0;last\r\n\r\n", "hello", ""},
		{"BWS before extension", "5 ;a=b\r\nhello\r\n0\r\n\r\n", "hello", ""},
		{"quoted extension", "5;a=\"x;y\"\r\nhello\r\n0\r\n\r\n", "hello", ""},
		{"extensions with BWS", "5 ; a = b ; c=\"q \\\" d\" ;e\r\nhello\r\n0\r\n\r\n", "hello", ""},
		// Chunks whose framing is large beside their data, but proportionate: accepted.
		{"many small chunks", strings.Repeat("1;ab=cd\r\nx\r\n", 3000) + "0\r\n\r\n", strings.Repeat("x", 3000), ""},
		// RFC 9112 §7.1.2: trailer fields.
		{"trailers", "5\r\nhello\r\n0\r\nChecksum: abc\r\nX-T:  v \r\n\r\n", "hello", "Checksum: abc\r\nX-T:  v \r\n"},
		{"binary data", "3\r\n\r\n\x00\r\n0\r\n\r\n", "\r\n\x00", ""},
	}
	for _, tt := range tests {
		for _, step := range []int{1, 2, 3, len(tt.in)} {
			for _, rs := range []int{1, 4, 64} {
				body, tr, err := decodeAll(tt.in, step, rs, 0)
				if err != io.EOF || string(body) != tt.body || string(tr) != tt.trailer {
					t.Errorf("%s (step %d, read %d): body %q trailer %q err %v", tt.name, step, rs, body, tr, err)
				}
			}
		}
	}
}

func TestChunkedTrailerLookup(t *testing.T) {
	var d ChunkedDecoder
	d.Reset(0)
	if _, _, err := d.Decode(make([]byte, 16), []byte("1\r\nx\r\n0\r\nA: 1\r\nB-Two: 2 2\r\n\r\n")); err != io.EOF {
		t.Fatal(err)
	}
	var got []string
	d.Trailers(func(n, v []byte) bool {
		got = append(got, string(n)+"="+string(v))
		return true
	})
	if strings.Join(got, ",") != "A=1,B-Two=2 2" {
		t.Errorf("trailers %v", got)
	}
}

func TestChunkedErrors(t *testing.T) {
	tests := []struct {
		name, in string
		want     error
	}{
		{"empty size", "\r\nhello\r\n0\r\n\r\n", ErrChunkSize},
		{"bad hex", "5g\r\nhello\r\n0\r\n\r\n", ErrChunkSize},
		{"negative", "-5\r\nhello\r\n0\r\n\r\n", ErrChunkSize},
		{"space before size", " 5\r\nhello\r\n0\r\n\r\n", ErrChunkSize},
		{"space after size", "5 \r\nhello\r\n0\r\n\r\n", ErrChunkSize},
		{"0x prefix", "0x5\r\nhello\r\n0\r\n\r\n", ErrChunkSize},
		{"overflow", "fffffffffffffffff\r\n", ErrChunkOverflow},
		{"bare LF after size", "5\nhello\r\n0\r\n\r\n", ErrChunkSize},
		{"CR without LF", "5\rhello\r\n0\r\n\r\n", ErrChunkLF},
		{"data too long", "5\r\nhelloX\r\n0\r\n\r\n", ErrChunkCRLF},
		{"missing CRLF after data", "5\r\nhello0\r\n\r\n", ErrChunkCRLF},
		{"LF only after data", "5\r\nhello\n0\r\n\r\n", ErrChunkCRLF},
		{"CTL in extension", "5;a\x01\r\nhello\r\n0\r\n\r\n", ErrChunkExt},
		{"bare LF in extension", "5;a\nhello\r\n0\r\n\r\n", ErrChunkExt},
		{"bad trailer", "0\r\nBad Name: x\r\n\r\n", ErrTrailer},
		{"trailer bare LF", "0\r\nA: b\n\r\n", ErrTrailer},
		{"trailer obs-fold", "0\r\nA: b\r\n c\r\n\r\n", ErrTrailer},
		{"final CR without LF", "0\r\n\rX", ErrChunkLF},
		{"long size line", "1;" + strings.Repeat("a", maxChunkLine) + "\r\nx\r\n0\r\n\r\n", nil},
		{"huge trailer", "0\r\nA: " + strings.Repeat("a", MaxTrailerSize) + "\r\n\r\n", ErrTrailerSize},
		// RFC 9112 §7.1.1: chunk-ext = *( BWS ";" BWS chunk-ext-name [ BWS "=" BWS chunk-ext-val ] ).
		{"empty extension name", "5;\r\nhello\r\n0\r\n\r\n", ErrChunkExt},
		{"empty name before =", "5;=x\r\nhello\r\n0\r\n\r\n", ErrChunkExt},
		{"empty extension value", "5;a=\r\nhello\r\n0\r\n\r\n", ErrChunkExt},
		{"space in token value", "5;a=b c\r\nhello\r\n0\r\n\r\n", ErrChunkExt},
		{"unterminated quote", "5;a=\"x\r\nhello\r\n0\r\n\r\n", ErrChunkExt},
		{"whitespace before CR", "5;a=b \r\nhello\r\n0\r\n\r\n", ErrChunkExt},
		{"separator in name", "5;a/b\r\nhello\r\n0\r\n\r\n", ErrChunkExt},
		// Framing out of proportion to the data (the class of CVE-2023-39326): 2,000 one-byte
		// chunks each with a 4 KiB extension, 8 MB on the wire for a 2 KB body.
		{"extension overhead", strings.Repeat("1;a="+strings.Repeat("v", 4000)+"\r\nx\r\n", 2000) + "0\r\n\r\n", ErrChunkExcess},
	}
	for _, tt := range tests {
		for _, step := range []int{1, len(tt.in)} {
			_, _, err := decodeAll(tt.in, step, 8, 0)
			if tt.want == nil {
				if err == io.EOF || err == io.ErrUnexpectedEOF {
					t.Errorf("%s (step %d): accepted", tt.name, step)
				}
				continue
			}
			if !errors.Is(err, tt.want) {
				t.Errorf("%s (step %d): err %v, want %v", tt.name, step, err, tt.want)
			}
		}
	}
}

func TestChunkedStickyError(t *testing.T) {
	var d ChunkedDecoder
	d.Reset(0)
	if _, _, err := d.Decode(make([]byte, 8), []byte("zz\r\n")); err != ErrChunkSize {
		t.Fatalf("err %v", err)
	}
	if _, _, err := d.Decode(make([]byte, 8), []byte("5\r\nhello\r\n")); err != ErrChunkSize {
		t.Fatalf("error not sticky: %v", err)
	}
}

func TestChunkedLimit(t *testing.T) {
	in := "5\r\nhello\r\n5\r\nworld\r\n0\r\n\r\n"
	if body, _, err := decodeAll(in, len(in), 64, 10); err != io.EOF || string(body) != "helloworld" {
		t.Fatalf("at the limit: %q %v", body, err)
	}
	body, _, err := decodeAll(in, len(in), 64, 9)
	if err != ErrTooLarge {
		t.Fatalf("over the limit: err %v", err)
	}
	if string(body) != "hello" {
		t.Fatalf("over the limit: delivered %q, want only the chunk under it", body)
	}
}

func TestChunkedDiscard(t *testing.T) {
	var d ChunkedDecoder
	d.Reset(0)
	in := []byte("5\r\nhello\r\n3\r\nabc\r\n0\r\n\r\nGET / HTTP/1.1\r\n")
	nd, ns, err := d.Decode(nil, in)
	if err != io.EOF || nd != 8 || string(in[ns:]) != "GET / HTTP/1.1\r\n" {
		t.Fatalf("discard: nd=%d rest=%q err=%v", nd, in[ns:], err)
	}
}

// TestChunkedMatchesNetHTTP compares the decoder with net/http's on inputs both accept.
func TestChunkedMatchesNetHTTP(t *testing.T) {
	for _, in := range []string{
		"5\r\nhello\r\n0\r\n\r\n",
		"1\r\na\r\n2\r\nbc\r\n3\r\ndef\r\n0\r\n\r\n",
		"10\r\n0123456789abcdef\r\n0\r\n\r\n",
	} {
		ours, _, err := decodeAll(in, 1, 3, 0)
		if err != io.EOF {
			t.Fatalf("%q: %v", in, err)
		}
		theirs, err := io.ReadAll(httputil.NewChunkedReader(strings.NewReader(in)))
		if err != nil {
			t.Fatalf("%q: net/http: %v", in, err)
		}
		if !bytes.Equal(ours, theirs) {
			t.Errorf("%q: ours %q, net/http %q", in, ours, theirs)
		}
	}
}
