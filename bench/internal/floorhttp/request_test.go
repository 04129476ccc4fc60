package floorhttp

import (
	"strings"
	"testing"
)

func TestParseRequest(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		path     string
		size     int
		close    bool
		err      error
	}{
		{name: "wrk", in: "GET /hello HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n\r\n", path: "/hello", size: 45},
		{name: "close", in: "GET /hello HTTP/1.1\r\nConnection: keep-alive, Close\r\n\r\n", path: "/hello", size: 54, close: true},
		{name: "http/1.0", in: "GET / HTTP/1.0\r\n\r\n", path: "/", size: 18, close: true},
		{name: "body", in: "POST /x HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc", path: "/x", size: 42},
		{name: "no fields", in: "GET / HTTP/1.1\r\n\r\n", path: "/", size: 18},
		{name: "bad version", in: "GET / HTTP/2\r\n\r\n", err: ErrMalformed},
		{name: "no target", in: "GET\r\n\r\n", err: ErrMalformed},
		{name: "field without colon", in: "GET / HTTP/1.1\r\nHost\r\n\r\n", err: ErrMalformed},
		{name: "bad length", in: "POST / HTTP/1.1\r\nContent-Length: -1\r\n\r\n", err: ErrMalformed},
		{name: "two lengths", in: "POST / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab", err: ErrMalformed},
		{name: "chunked", in: "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", err: ErrNotAnswerable},
		{name: "big body", in: "POST / HTTP/1.1\r\nContent-Length: 2000000\r\n\r\n", err: ErrBodyTooLarge},
		{name: "big head", in: "GET / HTTP/1.1\r\nX: " + strings.Repeat("a", MaxHead) + "\r\n\r\n", err: ErrHeadTooLarge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, ok, err := Parse([]byte(tc.in))
			if err != tc.err {
				t.Fatalf("err = %v, want %v", err, tc.err)
			}
			if err != nil {
				return
			}
			if !ok || string(req.Path) != tc.path || req.Size != tc.size || req.Close != tc.close {
				t.Fatalf("got ok=%v path=%q size=%d close=%v, want path=%q size=%d close=%v",
					ok, req.Path, req.Size, req.Close, tc.path, tc.size, tc.close)
			}
			// Every proper prefix is incomplete, not an error and not a request.
			for i := range len(tc.in) {
				if _, ok, err := Parse([]byte(tc.in[:i])); ok || err != nil {
					t.Fatalf("prefix of %d bytes: ok=%v err=%v", i, ok, err)
				}
			}
		})
	}
}

// TestParsePipelined walks a pipelined input request by request, as Answer does.
func TestParsePipelined(t *testing.T) {
	one := "GET /hello HTTP/1.1\r\nHost: h\r\n\r\n"
	in := []byte(strings.Repeat(one, 16) + "GET /hel")
	var n, used int
	for {
		req, ok, err := Parse(in[used:])
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			break
		}
		used += req.Size
		n++
	}
	if n != 16 || used != 16*len(one) {
		t.Fatalf("parsed %d requests over %d bytes, want 16 over %d", n, used, 16*len(one))
	}
}

func FuzzParseRequest(f *testing.F) {
	f.Add([]byte("GET /hello HTTP/1.1\r\nHost: h\r\n\r\nGET /hello HTTP/1.1\r\n\r\n"))
	f.Add([]byte("POST /x HTTP/1.1\r\nContent-Length: 3\r\nConnection: close\r\n\r\nabc"))
	f.Fuzz(func(t *testing.T, b []byte) {
		req, ok, err := Parse(b)
		if ok && (err != nil || req.Size <= 0 || req.Size > len(b)) {
			t.Fatalf("ok with size %d of %d bytes, err %v", req.Size, len(b), err)
		}
	})
}
