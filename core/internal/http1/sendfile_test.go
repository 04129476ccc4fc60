package http1

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/dwellhttp/dwell/core/internal/serve"
)

// sendFileServer serves parts of the file at path: ?seg=OFF:N,OFF:N,... sends each segment with
// SendFile in turn, and ?length=L declares a Content-Length first (chunked without it).
func sendFileServer(t *testing.T, path string) string {
	t.Helper()
	_, addr := startServer(t, func(c *serve.Ctx) {
		f, err := os.Open(path)
		if err != nil {
			t.Error(err)
			return
		}
		defer f.Close()
		if l := c.Query("length"); l != "" {
			c.SetHeader("Content-Length", l)
		}
		for seg := range strings.SplitSeq(c.Query("seg"), ",") {
			a, b, _ := strings.Cut(seg, ":")
			off, _ := strconv.ParseInt(a, 10, 64)
			n, _ := strconv.ParseInt(b, 10, 64)
			if err := c.SendFile(f, off, n); err != nil {
				// Only a file shorter than the segment may fail it; the connection is closed.
				if fi, serr := f.Stat(); serr != nil || off+n <= fi.Size() {
					t.Errorf("SendFile(%d, %d): %v", off, n, err)
				}
				return
			}
		}
	}, serve.Options{WriteHighWater: 64 << 10})
	return addr
}

func writeFile(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// Segments on both sides of CopyFileMax (copied into the write queue, or spliced with
// sendfile behind a head sent with MSG_MORE), alone and mixed in one response, with a declared
// length and chunked, all pipelined on one connection: every byte arrives, in order.
func TestSendFileSizes(t *testing.T) {
	var sb strings.Builder
	for i := 0; sb.Len() < 1<<20; i++ {
		fmt.Fprintf(&sb, "%07d\n", i)
	}
	content := sb.String()
	addr := sendFileServer(t, writeFile(t, content))
	type seg struct{ off, n int }
	cases := [][]seg{
		{{0, 1}},
		{{3, serve.CopyFileMax - 1}},
		{{0, serve.CopyFileMax}},
		{{7, serve.CopyFileMax + 1}},
		{{0, len(content)}},
		{{10, 100}, {200_000, 300_000}, {5, serve.CopyFileMax}},
		{{500_000, serve.CopyFileMax + 1}, {1, 1}, {2, 2}},
	}
	var reqs strings.Builder
	var wants []string
	for _, chunked := range []bool{false, true} {
		for _, segs := range cases {
			var spec []string
			want := ""
			for _, s := range segs {
				spec = append(spec, fmt.Sprintf("%d:%d", s.off, s.n))
				want += content[s.off : s.off+s.n]
			}
			q := "seg=" + strings.Join(spec, ",")
			if !chunked {
				q += "&length=" + strconv.Itoa(len(want))
			}
			fmt.Fprintf(&reqs, "GET /?%s HTTP/1.1\r\nHost: h\r\n\r\n", q)
			wants = append(wants, want)
		}
	}
	c := dial(t, addr)
	c.Send(reqs.String())
	for i, want := range wants {
		resp, body := c.Response("GET")
		chunked := i >= len(cases)
		if resp.StatusCode != 200 || (resp.ContentLength == -1) != chunked {
			t.Fatalf("response %d: status %d, length %d", i, resp.StatusCode, resp.ContentLength)
		}
		if body != want {
			t.Fatalf("response %d: %d bytes, want %d; first difference at %d", i, len(body), len(want), firstDiff(body, want))
		}
	}
}

// The whole file with a declared length, a range chunked, and HEAD, which sends no body.
func TestSendFile(t *testing.T) {
	content := strings.Repeat("0123456789", 100_000) // 1 MB
	addr := sendFileServer(t, writeFile(t, content))
	c := dial(t, addr)
	c.Send(fmt.Sprintf("GET /?length=%d&seg=0:%d HTTP/1.1\r\nHost: h\r\n\r\n", len(content), len(content)))
	if resp, body := c.Response("GET"); body != content || resp.ContentLength != int64(len(content)) {
		t.Fatalf("whole file: %d bytes, length %d", len(body), resp.ContentLength)
	}
	c.Send("GET /?seg=5:20 HTTP/1.1\r\nHost: h\r\n\r\n") // chunked: no length declared
	if resp, body := c.Response("GET"); body != content[5:25] || resp.ContentLength != -1 {
		t.Fatalf("range: %q, length %d", body, resp.ContentLength)
	}
	c.Send("HEAD /?length=20&seg=0:20 HTTP/1.1\r\nHost: h\r\n\r\n")
	if resp, body := c.Response("HEAD"); body != "" || resp.ContentLength != 20 {
		t.Fatalf("HEAD: %q, length %d", body, resp.ContentLength)
	}
}

// A file shorter than the length SendFile was given (truncated while being served) cannot
// complete the response: the client gets what there was, then the connection closes.
func TestSendFileShorterFile(t *testing.T) {
	content := strings.Repeat("x", 3*serve.CopyFileMax)
	addr := sendFileServer(t, writeFile(t, content))
	for _, n := range []int{100, 2 * serve.CopyFileMax} { // copied, then spliced
		off := len(content) - n/2
		c := dial(t, addr)
		c.Send(fmt.Sprintf("GET /?seg=%d:%d&length=%d HTTP/1.1\r\nHost: h\r\n\r\n", off, n, n))
		resp, err := http.ReadResponse(c.R, nil)
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		if err == nil {
			t.Fatalf("n=%d: the response of a short file ended cleanly with %d bytes", n, len(body))
		}
		if len(body) > n/2 {
			t.Fatalf("n=%d: %d bytes arrived, the file had %d", n, len(body), n/2)
		}
		c.ExpectEOF()
	}
}

func firstDiff(a, b string) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}
