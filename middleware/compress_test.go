package middleware_test

import (
	"bufio"
	"compress/gzip"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dwellhttp/dwell/body"
	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/core/coretest"
	"github.com/dwellhttp/dwell/middleware"
	"github.com/dwellhttp/dwell/wait"
)

// text returns n bytes of compressible text.
func text(n int) string {
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, `{"id":%d,"title":"item %d","done":false},`, i, i)
	}
	return b.String()[:n]
}

// compressed is the handler behind the compression tests.
// streamed says when /stream may write its second part: a topic, not an Event, so that a
// publish made before the handler waits is not missed.
func compressed(streamed *wait.Topic[bool]) core.Handler {
	return func(c *core.Ctx) {
		n, _ := strconv.Atoi(c.Query("n"))
		body := text(n)
		switch c.Path() {
		case "/json":
			c.SetHeader("Content-Type", "application/json")
		case "/untyped":
		case "/png":
			c.SetHeader("Content-Type", "image/png")
		case "/no-content":
			c.SetStatus(204)
			return
		case "/not-modified":
			c.SetHeader("Content-Type", "text/html")
			c.SetStatus(304)
			return
		case "/encoded":
			c.SetHeader("Content-Type", "text/plain")
			c.SetHeader("Content-Encoding", "br")
		case "/etag":
			c.SetHeader("Content-Type", "text/html; charset=utf-8")
			c.SetHeader("ETag", `"v1"`)
			c.SetHeader("Accept-Ranges", "bytes")
		case "/declared":
			c.SetHeader("Content-Type", "text/plain")
			c.SetHeader("Content-Length", strconv.Itoa(n))
		case "/later":
			wait.After(c, time.Millisecond, func(c *core.Ctx, err error) {
				c.SetHeader("Content-Type", "application/json")
				c.WriteString(body)
			})
			return
		case "/file", "/file-png", "/file-declared": // sent with SendFile
			f, err := os.CreateTemp("", "compress-")
			if err != nil {
				c.SetStatus(500)
				return
			}
			defer os.Remove(f.Name())
			defer f.Close()
			f.WriteString(body)
			c.SetHeader("Content-Type", "text/plain")
			switch c.Path() {
			case "/file-png":
				c.SetHeader("Content-Type", "image/png")
			case "/file-declared":
				c.SetHeader("Content-Length", strconv.Itoa(n))
			}
			c.SendFile(f, 0, int64(n))
			return
		case "/stream":
			c.SetHeader("Content-Type", "text/plain")
			c.WriteString("first part;")
			c.Flush()
			streamed.Next(c, 0, 0)
			c.WriteString("second part")
			return
		}
		for len(body) > 0 { // in pieces, as a handler streaming its body would
			k := min(len(body), 7000)
			c.WriteString(body[:k])
			body = body[k:]
		}
	}
}

// TestCompress: what is compressed and what is not, with the fields that say so; every
// compressed body decodes to what the handler wrote.
func TestCompress(t *testing.T) {
	streamed := wait.NewTopic[bool](1)
	_, addr := coretest.Serve(t, middleware.Compress(middleware.CompressOptions{})(compressed(streamed)), core.Options{})
	const gz = "Accept-Encoding: gzip\r\n"
	cases := []struct {
		name, target, fields, method string
		gzip                         bool
		n                            int
		want                         map[string]string // other fields; "" means absent
	}{
		{"large json", "/json?n=100000", gz, "GET", true, 100000, map[string]string{"Content-Type": "application/json"}},
		{"past the high-water mark", "/json?n=3000000", gz, "GET", true, 3000000, nil},
		{"at the threshold", "/json?n=1024", gz, "GET", true, 1024, nil},
		{"under the threshold", "/json?n=1023", gz, "GET", false, 1023, map[string]string{"Content-Length": "1023", "Content-Encoding": ""}},
		{"untyped is text", "/untyped?n=5000", gz, "GET", true, 5000, nil},
		{"not accepted", "/json?n=5000", "", "GET", false, 5000, map[string]string{"Content-Length": "5000"}},
		{"refused by q=0", "/json?n=5000", "Accept-Encoding: br, gzip;q=0\r\n", "GET", false, 5000, nil},
		{"any coding", "/json?n=5000", "Accept-Encoding: *\r\n", "GET", true, 5000, nil},
		{"image", "/png?n=5000", gz, "GET", false, 5000, map[string]string{"Content-Length": "5000"}},
		{"head", "/json?n=5000", gz, "HEAD", false, 0, map[string]string{"Content-Length": "5000", "Content-Encoding": ""}},
		{"range", "/json?n=5000", gz + "Range: bytes=0-9\r\n", "GET", false, 5000, nil},
		{"204", "/no-content", gz, "GET", false, 0, map[string]string{"Content-Encoding": ""}},
		{"304", "/not-modified", gz, "GET", false, 0, map[string]string{"Content-Encoding": ""}},
		{"encoded by the handler", "/encoded?n=5000", gz, "GET", false, 5000, map[string]string{"Content-Encoding": "br"}},
		{"etag weakened", "/etag?n=5000", gz, "GET", true, 5000, map[string]string{"ETag": `W/"v1"`, "Accept-Ranges": ""}},
		{"etag kept", "/etag?n=5000", "", "GET", false, 5000, map[string]string{"ETag": `"v1"`, "Accept-Ranges": "bytes"}},
		{"declared length", "/declared?n=5000", gz, "GET", true, 5000, nil},
		{"declared short", "/declared?n=100", gz, "GET", false, 100, map[string]string{"Content-Length": "100"}},
		{"continuation", "/later?n=5000", gz, "GET", true, 5000, nil},
		{"two field lines", "/json?n=5000", "Accept-Encoding: br\r\nAccept-Encoding: gzip\r\n", "GET", true, 5000, nil},
		{"file of no declared length", "/file?n=5000", gz, "GET", true, 5000, nil},
		{"small file of no declared length", "/file?n=100", gz, "GET", false, 100, nil},
		{"file declared", "/file-declared?n=5000", gz, "GET", true, 5000, nil},
		{"file declared short", "/file-declared?n=100", gz, "GET", false, 100, map[string]string{"Content-Length": "100"}},
		{"image file", "/file-png?n=5000", gz, "GET", false, 5000, nil},
	}
	c := dialRaw(t, addr) // one connection: filters and compressors are reused between requests
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c.Send(tc.method + " " + tc.target + " HTTP/1.1\r\nHost: h\r\n" + tc.fields + "\r\n")
			resp, body := c.Response(tc.method)
			if got := resp.Header.Get("Content-Encoding") == "gzip"; got != tc.gzip {
				t.Fatalf("gzip %v, want %v (%q)", got, tc.gzip, resp.Header)
			}
			if cl := resp.Header.Get("Content-Length"); cl != "" && tc.method == "GET" && cl != strconv.Itoa(len(body)) {
				t.Fatalf("Content-Length %s for %d bytes", cl, len(body))
			}
			if tc.gzip {
				zr, err := gzip.NewReader(strings.NewReader(body))
				if err != nil {
					t.Fatal(err)
				}
				b, err := io.ReadAll(zr)
				if err != nil {
					t.Fatal(err)
				}
				body = string(b)
			}
			if tc.method == "GET" && body != text(tc.n) {
				t.Fatalf("body of %d bytes, want %d", len(body), tc.n)
			}
			if !strings.Contains(strings.Join(resp.Header.Values("Vary"), ","), "Accept-Encoding") {
				t.Fatalf("Vary %q, want Accept-Encoding", resp.Header.Values("Vary"))
			}
			for k, v := range tc.want {
				if got := resp.Header.Get(k); got != v {
					t.Errorf("%s %q, want %q", k, got, v)
				}
			}
		})
	}
	t.Run("stream", func(t *testing.T) {
		s := dialRaw(t, addr)
		s.Send("GET /stream HTTP/1.1\r\nHost: h\r\n" + gz + "\r\n")
		resp, err := readResponse(s)
		if err != nil || resp.Header.Get("Content-Encoding") != "gzip" {
			t.Fatalf("%v %q", err, resp.Header)
		}
		// The first part arrives, decodable, while the handler waits: Flush went through.
		zr, err := gzip.NewReader(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		br := bufio.NewReader(zr)
		if first, err := br.ReadString(';'); first != "first part;" {
			t.Fatalf("first part %q, %v", first, err)
		}
		streamed.Publish(true)
		if rest, err := io.ReadAll(br); string(rest) != "second part" || err != nil {
			t.Fatalf("rest %q, %v", rest, err)
		}
	})
}

// TestCompressNotModified: a 304 carries the ETag of the 200 it revalidates (RFC 9110 §15.4.5):
// weak for a client holding the compressed copy, strong for one holding the uncompressed one.
func TestCompressNotModified(t *testing.T) {
	modtime := time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)
	h := middleware.Compress(middleware.CompressOptions{})(func(c *core.Ctx) {
		body.ServeContent(c, "page.txt", modtime, strings.NewReader(text(5000)))
	})
	get := func(fields ...string) *http.Response {
		r, _ := http.NewRequest("GET", "http://h/page.txt", nil)
		for i := 0; i < len(fields); i += 2 {
			r.Header.Add(fields[i], fields[i+1])
		}
		return coretest.Do(t, h, r)
	}
	zipped := get("Accept-Encoding", "gzip")
	plain := get()
	weak, strong := zipped.Header.Get("ETag"), plain.Header.Get("ETag")
	if zipped.Header.Get("Content-Encoding") != "gzip" || weak != "W/"+strong {
		t.Fatalf("the 200s: compressed %q with ETag %s, plain with %s", zipped.Header.Get("Content-Encoding"), weak, strong)
	}
	for _, tc := range []struct {
		fields []string
		want   string
	}{
		{[]string{"Accept-Encoding", "gzip", "If-None-Match", weak}, weak},
		{[]string{"Accept-Encoding", "gzip", "If-None-Match", `"other", ` + weak + ` , "more"`}, weak},
		{[]string{"Accept-Encoding", "gzip", "If-None-Match", `"other"`, "If-None-Match", weak}, weak},
		{[]string{"Accept-Encoding", "gzip", "If-None-Match", strong}, strong},
		{[]string{"If-None-Match", strong}, strong},
		{[]string{"If-None-Match", weak}, strong}, // no compressed 200 for this client: its tag is strong
	} {
		resp := get(tc.fields...)
		if resp.StatusCode != 304 || resp.Header.Get("ETag") != tc.want {
			t.Errorf("%q: %d with ETag %s, want 304 with %s", tc.fields, resp.StatusCode, resp.Header.Get("ETag"), tc.want)
		}
	}
}

// TestCompressOptions: a threshold, a type list with patterns, a level.
func TestCompressOptions(t *testing.T) {
	mw := middleware.Compress(middleware.CompressOptions{MinSize: -1, Types: []string{"image/*"}, Level: 9})
	_, addr := coretest.Serve(t, mw(compressed(nil)), core.Options{})
	c := dialRaw(t, addr)
	for _, tc := range []struct {
		target string
		gzip   bool
	}{{"/png?n=10", true}, {"/json?n=10000", false}} {
		c.Send("GET " + tc.target + " HTTP/1.1\r\nHost: h\r\nAccept-Encoding: gzip\r\n\r\n")
		if resp, _ := c.Response("GET"); (resp.Header.Get("Content-Encoding") == "gzip") != tc.gzip {
			t.Fatalf("%s: %q", tc.target, resp.Header)
		}
	}
	defer func() {
		if recover() == nil {
			t.Fatal("a level of 10 did not panic")
		}
	}()
	middleware.Compress(middleware.CompressOptions{Level: 10})
}
