package main

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/core/coretest"
)

// serve starts httpbin on a free port with the given body limit.
func serve(t *testing.T, maxBody int64) string {
	t.Helper()
	_, addr := coretest.Serve(t, newHandler(), core.Options{MaxBodyBytes: maxBody, MaxHeaderBytes: 16 << 10})
	return addr
}

// raw sends a request as bytes and reads one response.
func raw(t *testing.T, addr, req string) (*http.Response, string) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(coretest.Patience))
	io.WriteString(c, req)
	method, _, _ := strings.Cut(req, " ")
	resp, err := http.ReadResponse(bufio.NewReader(c), &http.Request{Method: method})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

func TestAnythingEchoes(t *testing.T) {
	addr := serve(t, 1<<20)
	resp, body := raw(t, addr, "PROPFIND /anything/a%20b?x=1&y HTTP/1.1\r\nHost: example\r\nX-One:  first \r\nx-two: 2\r\nContent-Length: 5\r\n\r\nhello")
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("%d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	var e echo
	if err := json.Unmarshal([]byte(body), &e); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte("hello"))
	want := echo{
		Method: "PROPFIND", Target: "/anything/a%20b?x=1&y", Path: "/anything/a b", Query: "x=1&y", Proto: "HTTP/1.1",
		Headers:    [][2]string{{"host", "example"}, {"x-one", "first"}, {"x-two", "2"}, {"content-length", "5"}},
		BodyLength: 5, BodySHA256: hex.EncodeToString(sum[:]), Trailers: [][2]string{},
	}
	if fmt.Sprint(e) != fmt.Sprint(want) {
		t.Fatalf("got  %+v\nwant %+v", e, want)
	}
}

func TestAnythingChunkedWithTrailers(t *testing.T) {
	addr := serve(t, 1<<20)
	if resp, body := raw(t, addr, "POST /anything HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n"); resp.StatusCode != 400 {
		t.Fatalf("chunked HTTP/1.0: %d %s", resp.StatusCode, body)
	}
	_, body := raw(t, addr, "POST /anything HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\nX-Sum: 1\r\n\r\n")
	var e echo
	if err := json.Unmarshal([]byte(body), &e); err != nil {
		t.Fatal(err, body)
	}
	sum := sha256.Sum256([]byte("abcde"))
	if e.BodyLength != 5 || e.BodySHA256 != hex.EncodeToString(sum[:]) || fmt.Sprint(e.Trailers) != "[[x-sum 1]]" {
		t.Fatalf("%+v", e)
	}
}

func TestBodyLimit(t *testing.T) {
	addr := serve(t, 10)
	resp, _ := raw(t, addr, "POST /anything HTTP/1.1\r\nHost: h\r\nContent-Length: 11\r\nExpect: 100-continue\r\n\r\n")
	if resp.StatusCode != 413 || !resp.Close {
		t.Fatalf("declared: %d close=%v", resp.StatusCode, resp.Close)
	}
	resp, _ = raw(t, addr, "POST /anything HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n6\r\nabcdef\r\n6\r\nghijkl\r\n0\r\n\r\n")
	if resp.StatusCode != 413 || !resp.Close {
		t.Fatalf("chunked: %d close=%v", resp.StatusCode, resp.Close)
	}
}

func TestStatusAndRouting(t *testing.T) {
	addr := serve(t, 1<<20)
	for _, tt := range []struct {
		req    string
		status int
		header string
	}{
		{"GET /status/418 HTTP/1.1\r\nHost: h\r\n\r\n", 418, ""},
		{"GET /status/599 HTTP/1.1\r\nHost: h\r\n\r\n", 599, ""},
		{"GET /status/600 HTTP/1.1\r\nHost: h\r\n\r\n", 400, ""},
		{"GET /status/101 HTTP/1.1\r\nHost: h\r\n\r\n", 400, ""}, // an interim status is no answer
		{"GET /status/103 HTTP/1.1\r\nHost: h\r\n\r\n", 400, ""},
		{"GET /status/abc HTTP/1.1\r\nHost: h\r\n\r\n", 400, ""},
		{"POST /status/200 HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\n\r\n", 405, "Allow"},
		{"DELETE /bytes/1 HTTP/1.1\r\nHost: h\r\n\r\n", 405, "Allow"},
		{"OPTIONS /status/200 HTTP/1.1\r\nHost: h\r\n\r\n", 200, "Allow"},
		{"GET /status/200/ HTTP/1.1\r\nHost: h\r\n\r\n", 301, "Location"},
		{"GET /nowhere HTTP/1.1\r\nHost: h\r\n\r\n", 404, ""},
	} {
		resp, _ := raw(t, addr, tt.req)
		if resp.StatusCode != tt.status {
			t.Errorf("%q: %d, want %d", tt.req, resp.StatusCode, tt.status)
		}
		if tt.header != "" && resp.Header.Get(tt.header) == "" {
			t.Errorf("%q: no %s header", tt.req, tt.header)
		}
		if tt.status == 405 && !strings.Contains(resp.Header.Get("Allow"), "GET") {
			t.Errorf("%q: Allow %q lists no GET", tt.req, resp.Header.Get("Allow"))
		}
	}
}

func TestBytes(t *testing.T) {
	addr := serve(t, 1<<20)
	want := func(n int) string {
		var sb strings.Builder
		for i := range n {
			sb.WriteByte('a' + byte(i%26))
		}
		return sb.String()
	}
	for _, n := range []int{0, 1, 26, 65521, 262080, 262081, 600000} {
		resp, body := raw(t, addr, fmt.Sprintf("GET /bytes/%d HTTP/1.1\r\nHost: h\r\n\r\n", n))
		if resp.ContentLength != int64(n) || body != want(n) {
			t.Fatalf("/bytes/%d: length %d, %d bytes, right=%v", n, resp.ContentLength, len(body), body == want(n))
		}
		resp, body = raw(t, addr, fmt.Sprintf("GET /stream-bytes/%d HTTP/1.1\r\nHost: h\r\n\r\n", n))
		if len(resp.TransferEncoding) == 0 || body != want(n) {
			t.Fatalf("/stream-bytes/%d: %v, right=%v", n, resp.TransferEncoding, body == want(n))
		}
	}
	resp, _ := raw(t, addr, "HEAD /bytes/1000 HTTP/1.1\r\nHost: h\r\n\r\n")
	if resp.ContentLength != 1000 {
		t.Fatalf("HEAD length %d", resp.ContentLength)
	}
	for _, bad := range []string{"-1", "104857601", "x", "+5"} {
		if resp, _ := raw(t, addr, "GET /bytes/"+bad+" HTTP/1.1\r\nHost: h\r\n\r\n"); resp.StatusCode != 400 {
			t.Errorf("/bytes/%s: %d", bad, resp.StatusCode)
		}
	}
}

func TestDelay(t *testing.T) {
	addr := serve(t, 1<<20)
	start := time.Now()
	_, body := raw(t, addr, "GET /delay/200 HTTP/1.1\r\nHost: h\r\n\r\n")
	if d := time.Since(start); d < 190*time.Millisecond || strings.TrimSpace(body) != `{"delayed_ms": 200}` {
		t.Fatalf("%v %q", d, body)
	}
	if resp, _ := raw(t, addr, "GET /delay/10001 HTTP/1.1\r\nHost: h\r\n\r\n"); resp.StatusCode != 400 {
		t.Fatal(resp.StatusCode)
	}
}

// TestManyDelays: 200 concurrent /delay/1000 wait side by side, not one after another.
func TestManyDelays(t *testing.T) {
	addr := serve(t, 1<<20)
	start := time.Now()
	var wg sync.WaitGroup
	errs := make(chan string, 200)
	for range 200 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, body := raw(t, addr, "GET /delay/1000 HTTP/1.1\r\nHost: h\r\n\r\n")
			if resp.StatusCode != 200 || !strings.Contains(body, "1000") {
				errs <- body
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatal(e)
	}
	// One after another they would take 200 s, ten at a time 20 s; side by side, a second and
	// what a loaded machine adds, which is not ten seconds.
	if d := time.Since(start); d >= 20*time.Second {
		t.Fatalf("200 delays took %v", d)
	}
}

func TestDrip(t *testing.T) {
	addr := serve(t, 1<<20)
	start := time.Now()
	resp, body := raw(t, addr, "GET /drip?bytes=20&ms=300 HTTP/1.1\r\nHost: h\r\n\r\n")
	d := time.Since(start)
	if body != strings.Repeat("*", 20) || len(resp.TransferEncoding) == 0 || d < 250*time.Millisecond {
		t.Fatalf("%q %v after %v", body, resp.TransferEncoding, d)
	}
	if _, body := raw(t, addr, "GET /drip HTTP/1.1\r\nHost: h\r\n\r\n"); body != strings.Repeat("*", 10) {
		t.Fatalf("default drip %q", body)
	}
	if _, body := raw(t, addr, "GET /drip?bytes=2500 HTTP/1.1\r\nHost: h\r\n\r\n"); len(body) != 2500 {
		t.Fatalf("large drip: %d bytes", len(body))
	}
	for _, bad := range []string{"bytes=-1", "bytes=10485761", "ms=10001", "ms=x"} {
		if resp, _ := raw(t, addr, "GET /drip?"+bad+" HTTP/1.1\r\nHost: h\r\n\r\n"); resp.StatusCode != 400 {
			t.Errorf("/drip?%s: %d", bad, resp.StatusCode)
		}
	}
}
