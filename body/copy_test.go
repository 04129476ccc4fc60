package body_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"strings"
	"testing"

	"github.com/dwellhttp/dwell/body"
	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/core/coretest"
)

// failingWriter takes ok bytes, then fails.
type failingWriter struct{ ok int }

var errDiskFull = errors.New("disk full")

func (w *failingWriter) Write(p []byte) (int, error) {
	if len(p) <= w.ok {
		w.ok -= len(p)
		return len(p), nil
	}
	n := w.ok
	w.ok = 0
	return n, errDiskFull
}

// TestCopy: bodies of every size around the piece size arrive whole, framed either way; a
// body the client cuts short ends with io.ErrUnexpectedEOF, one over the limit with
// ErrBodyTooLarge, and a failing destination with ErrWrite wrapping its own error.
func TestCopy(t *testing.T) {
	type result struct {
		n   int64
		err error
		sum string
	}
	results := make(chan result, 1)
	_, addr := coretest.Serve(t, func(c *core.Ctx) {
		var dst io.Writer
		var buf bytes.Buffer
		dst = &buf
		if c.Path() == "/fail" {
			dst = &failingWriter{ok: 300 << 10}
		}
		if c.Path() == "/limit" {
			c.Seam().LimitBody(1000)
		}
		n, err := body.Copy(c, dst, body.Reader(c))
		results <- result{n, err, digest(buf.Bytes())}
		if err == nil {
			c.WriteString("stored")
		} else if errors.Is(err, body.ErrWrite) {
			c.SetStatus(500)
		}
	}, core.Options{})
	for _, size := range []int{0, 1, 256<<10 - 1, 256 << 10, 256<<10 + 1, 1<<20 + 3} {
		for _, isChunked := range []bool{false, true} {
			t.Run(fmt.Sprintf("%d chunked=%v", size, isChunked), func(t *testing.T) {
				b := payload(size, byte(size))
				c := dial(t, addr)
				go c.write(post("/", b, isChunked, ""), false)
				resp, got := c.Response("POST")
				r := <-results
				if resp.StatusCode != 200 || got != "stored" || r.err != nil || r.n != int64(size) || r.sum != digest(b) {
					t.Fatalf("got %d %q, copy %d %v %s", resp.StatusCode, got, r.n, r.err, r.sum)
				}
			})
		}
	}
	t.Run("cut short", func(t *testing.T) {
		c := dial(t, addr)
		c.Send("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 1000\r\n\r\n" + strings.Repeat("x", 500))
		c.CloseWrite()
		if r := <-results; !errors.Is(r.err, io.ErrUnexpectedEOF) || r.n != 500 {
			t.Fatalf("copy %d %v, want 500 io.ErrUnexpectedEOF", r.n, r.err)
		}
	})
	t.Run("over the limit", func(t *testing.T) {
		c := dial(t, addr)
		go c.write(post("/limit", payload(2000, 1), true, ""), false)
		resp, _ := c.Response("POST")
		if r := <-results; !errors.Is(r.err, core.ErrBodyTooLarge) || resp.StatusCode != 413 {
			t.Fatalf("copy %d %v, status %d", r.n, r.err, resp.StatusCode)
		}
	})
	t.Run("write fails", func(t *testing.T) {
		c := dial(t, addr)
		go c.write(post("/fail", payload(1<<20, 2), false, ""), false)
		resp, _ := c.Response("POST")
		r := <-results
		if !errors.Is(r.err, body.ErrWrite) || !errors.Is(r.err, errDiskFull) || r.n != 300<<10 || resp.StatusCode != 500 {
			t.Fatalf("copy %d %v, status %d", r.n, r.err, resp.StatusCode)
		}
	})
}

// blockingWriter blocks each Write until the test releases it.
type blockingWriter struct{ entered, release chan struct{} }

func (w *blockingWriter) Write(p []byte) (int, error) {
	w.entered <- struct{}{}
	<-w.release
	return len(p), nil
}

// TestCopyOffTheLoop: while a destination's Write blocks, the loop — one loop only — goes on
// serving other requests.
func TestCopyOffTheLoop(t *testing.T) {
	w := &blockingWriter{entered: make(chan struct{}), release: make(chan struct{})}
	_, addr := coretest.Serve(t, func(c *core.Ctx) {
		if c.Method() == "GET" {
			c.WriteString("served")
			return
		}
		n, err := body.Copy(c, w, body.Reader(c))
		fmt.Fprint(c, n, err)
	}, core.Options{Loops: 1})
	up := dial(t, addr)
	up.Send(post("/", []byte("upload"), false, ""))
	<-w.entered
	other := dial(t, addr)
	other.Send("GET / HTTP/1.1\r\nHost: h\r\n\r\n")
	if _, got := other.Response("GET"); got != "served" {
		t.Fatalf("other request: %q", got)
	}
	close(w.release)
	if _, got := up.Response("POST"); got != "6 <nil>" {
		t.Fatalf("upload: %q", got)
	}
}

// multipartBody builds a form with a text field and a file of size bytes.
func multipartBody(size int) (string, []byte, string) {
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	mw.WriteField("title", "report")
	file := payload(size, 7)
	fw, _ := mw.CreateFormFile("file", "report.bin")
	fw.Write(file)
	mw.Close()
	return mw.FormDataContentType(), buf.Bytes(), digest(file)
}

// TestMultipart: a form's fields and a file part streamed through Copy, framed either way; a
// body cut before its closing boundary ends with io.ErrUnexpectedEOF; the statuses of a body
// that is not multipart.
func TestMultipart(t *testing.T) {
	errs := make(chan error, 1)
	_, addr := coretest.Serve(t, func(c *core.Ctx) {
		mr, err := body.MultipartReader(c)
		if err != nil {
			answerBodyError(c, err)
			return
		}
		var out strings.Builder
		for {
			p, err := mr.NextPart()
			if err == io.EOF {
				break
			}
			if err != nil {
				errs <- err
				return
			}
			if p.FileName() == "" {
				v, _ := io.ReadAll(io.LimitReader(p, 100))
				fmt.Fprintf(&out, "%s=%s ", p.FormName(), v)
				continue
			}
			var buf bytes.Buffer
			n, err := body.Copy(c, &buf, p)
			if err != nil {
				errs <- err
				return
			}
			fmt.Fprintf(&out, "%s:%s:%d %s ", p.FormName(), p.FileName(), n, digest(buf.Bytes()))
		}
		errs <- nil
		c.WriteString(out.String())
	}, core.Options{})
	for _, size := range []int{0, 1000, 700 << 10} {
		for _, isChunked := range []bool{false, true} {
			t.Run(fmt.Sprintf("%d chunked=%v", size, isChunked), func(t *testing.T) {
				ct, b, sum := multipartBody(size)
				c := dial(t, addr)
				go c.write(post("/", b, isChunked, "Content-Type: "+ct+"\r\n"), false)
				resp, got := c.Response("POST")
				want := fmt.Sprintf("title=report file:report.bin:%d %s ", size, sum)
				if err := <-errs; err != nil || resp.StatusCode != 200 || got != want {
					t.Fatalf("got %d %q (%v), want %q", resp.StatusCode, got, err, want)
				}
			})
		}
	}
	t.Run("cut short", func(t *testing.T) {
		ct, b, _ := multipartBody(300 << 10)
		b = b[:len(b)-100] // the closing boundary is gone
		c := dial(t, addr)
		go func() {
			c.write(fmt.Sprintf("POST / HTTP/1.1\r\nHost: h\r\nContent-Type: %s\r\nTransfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n0\r\n\r\n", ct, len(b), b), false)
		}()
		if err := <-errs; !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Fatalf("error %v, want io.ErrUnexpectedEOF", err)
		}
	})
	for _, tc := range []struct {
		name, ct string
		status   int
	}{
		{"json", "application/json", 415},
		{"no type", "", 415},
		{"no boundary", "multipart/form-data", 400},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := dial(t, addr)
			extra := ""
			if tc.ct != "" {
				extra = "Content-Type: " + tc.ct + "\r\n"
			}
			c.Send(post("/", []byte("x"), false, extra))
			if resp, got := c.Response("POST"); resp.StatusCode != tc.status {
				t.Fatalf("got %d %q", resp.StatusCode, got)
			}
		})
	}
}

// TestMultipartEnds: only a form whose close delimiter came ends with io.EOF — with or without
// the line break after it, with bare line feeds, however the body's bytes arrive; a body cut
// after a part's boundary line, or one with no part at all, is io.ErrUnexpectedEOF.
func TestMultipartEnds(t *testing.T) {
	const b = "XyZ"
	ended := make(chan string, 1)
	_, addr := coretest.Serve(t, func(c *core.Ctx) {
		mr, err := body.MultipartReader(c)
		if err != nil {
			ended <- err.Error()
			return
		}
		for n := 0; ; n++ {
			p, err := mr.NextPart()
			switch {
			case err == io.EOF:
				ended <- fmt.Sprintf("ended after %d parts", n)
				return
			case errors.Is(err, io.ErrUnexpectedEOF):
				ended <- fmt.Sprintf("cut short after %d parts", n)
				return
			case err != nil:
				ended <- err.Error()
				return
			}
			if _, err := io.Copy(io.Discard, p); err != nil {
				ended <- "reading a part: " + err.Error()
				return
			}
		}
	}, core.Options{})
	part := "--" + b + "\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nvalue\r\n"
	for _, tc := range []struct{ name, body, want string }{
		{"whole", part + part + "--" + b + "--\r\n", "ended after 2 parts"},
		{"no line break after the close", part + "--" + b + "--", "ended after 1 parts"},
		{"an epilogue", part + "--" + b + "--\r\nepilogue", "ended after 1 parts"},
		{"no part", "--" + b + "--\r\n", "ended after 0 parts"},
		{"bare line feeds", strings.ReplaceAll(part+"--"+b+"--\r\n", "\r\n", "\n"), "ended after 1 parts"},
		{"cut after a boundary line", part + "--" + b + "\r\n", "cut short after 1 parts"},
		{"cut in a part", part + "--" + b + "\r\nContent-Disposition: form-data; name=\"b\"\r\n\r\nval", "reading a part: unexpected EOF"},
		{"cut in the close delimiter", part + "--" + b + "-", "reading a part: unexpected EOF"},
		{"empty", "", "cut short after 0 parts"},
	} {
		for _, bytewise := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s bytewise=%v", tc.name, bytewise), func(t *testing.T) {
				c := dial(t, addr)
				req := post("/", []byte(tc.body), bytewise, "Content-Type: multipart/form-data; boundary="+b+"\r\n")
				go c.write(req, bytewise)
				if got := coretest.Receive(t, "the form's end", ended); got != tc.want {
					t.Fatalf("%s, want %s", got, tc.want)
				}
			})
		}
	}
}
