package nethttp

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/core/coretest"
)

// TestResponseLength: a response the handler writes whole goes out with a Content-Length,
// whatever the sizes of its writes (up to the high-water mark); a longer one streams chunked.
// The body arrives intact either way.
func TestResponseLength(t *testing.T) {
	_, addr := serveStd(t, func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.URL.Query().Get("n"))
		step, _ := strconv.Atoi(r.URL.Query().Get("step"))
		b := []byte(strings.Repeat("abcdefghij", step/10+1))
		for n > 0 {
			k := min(n, step)
			if _, err := w.Write(b[:k]); err != nil {
				t.Errorf("write: %v", err)
				return
			}
			n -= k
		}
	}, core.Options{})
	cl := coretest.Dial(t, addr)
	for _, tc := range []struct{ n, step int }{
		{0, 1}, {11, 11}, {4096, 4096}, {4097, 100}, {100 << 10, 100}, {100 << 10, 5000},
		{200 << 10, 64 << 10}, {1 << 20, 100}, {1 << 20, 40000},
	} {
		cl.Send(fmt.Sprintf("GET /?n=%d&step=%d HTTP/1.1\r\nHost: h\r\n\r\n", tc.n, tc.step))
		resp, body := cl.Response("GET")
		wantBody := strings.Repeat("abcdefghij", tc.step/10+1)[:tc.step]
		if len(body) != tc.n || tc.n > 0 && !strings.HasPrefix(body, wantBody[:min(tc.n, tc.step)]) {
			t.Errorf("n=%d step=%d: body of %d bytes", tc.n, tc.step, len(body))
		}
		streamed := tc.n > 256<<10
		if got := resp.ContentLength == int64(tc.n); got == streamed {
			t.Errorf("n=%d step=%d: Content-Length %d, chunked %v", tc.n, tc.step, resp.ContentLength,
				resp.TransferEncoding)
		}
	}
}

// TestResponseContentType: the Content-Type the handler set goes out; without one it is
// sniffed from the first bytes (the first 512, however written), as net/http does, and an
// empty body gets none, nor does one whose type the handler set empty or nil, or one encoded
// without a type; a 304 has neither type nor length.
func TestResponseContentType(t *testing.T) {
	_, addr := serveStd(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/html":
			io.WriteString(w, "<!DOCTYPE html><html><p>hi</p></html>")
		case "/json":
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"a":1}`)
		case "/big":
			w.Write(append([]byte("\x89PNG\x0d\x0a\x1a\x0a"), make([]byte, 10000)...))
		case "/encoded":
			w.Header().Set("Content-Encoding", "gzip")
			io.WriteString(w, "<html>")
		case "/pieces": // a small write, then one past the buffer: sniffed from both
			io.WriteString(w, "<htm")
			io.WriteString(w, "l><body>"+strings.Repeat("x", 5000)+"</body></html>")
		case "/untyped":
			w.Header().Set("Content-Type", "")
			io.WriteString(w, "<html>")
		case "/suppressed":
			w.Header()["Content-Type"] = nil
			io.WriteString(w, "<html>")
		case "/not-modified":
			w.Header().Set("Content-Type", "text/html")
			w.Header().Set("Content-Length", "1234")
			w.WriteHeader(http.StatusNotModified)
		}
	}, core.Options{})
	cl := coretest.Dial(t, addr)
	for path, want := range map[string]string{
		"/html": "text/html; charset=utf-8", "/json": "application/json", "/big": "image/png",
		"/empty": "", "/encoded": "", // encoded, untyped: no type, as net/http sends it
		"/pieces": "text/html; charset=utf-8", "/untyped": "", "/suppressed": "", "/not-modified": "",
	} {
		cl.Send("GET " + path + " HTTP/1.1\r\nHost: h\r\n\r\n")
		resp, _ := cl.Response("GET")
		if got := resp.Header.Get("Content-Type"); got != want {
			t.Errorf("%s: Content-Type %q, want %q", path, got, want)
		}
		if resp.StatusCode == http.StatusNotModified && resp.Header.Get("Content-Length") != "" {
			t.Errorf("%s: 304 with Content-Length %q", path, resp.Header.Get("Content-Length"))
		}
	}
}

// TestResponseDeclaredLength: a Content-Length set by the handler is the body's: a write past
// it fails with http.ErrContentLength (and so do the writes after it, as in net/http), and a
// body that falls short of it ends the connection, so that the client sees it cut.
func TestResponseDeclaredLength(t *testing.T) {
	errs := make(chan error, 1)
	_, addr := serveStd(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "5")
		io.WriteString(w, "abc")
		if r.URL.Path == "/long" {
			_, err := io.WriteString(w, "def")
			errs <- err
		}
	}, core.Options{})
	for _, path := range []string{"/short", "/long"} {
		cl := coretest.Dial(t, addr)
		cl.Send("GET " + path + " HTTP/1.1\r\nHost: h\r\n\r\n")
		if path == "/long" {
			if err := <-errs; err != http.ErrContentLength {
				t.Errorf("writing past Content-Length: %v", err)
			}
		}
		resp, err := http.ReadResponse(cl.R, nil)
		if err != nil {
			t.Fatal(err)
		}
		if b, err := io.ReadAll(resp.Body); resp.ContentLength != 5 || string(b) != "abc" || err != io.ErrUnexpectedEOF {
			t.Errorf("%s: Content-Length %d, %q %v; want the 3 bytes written and the connection closed",
				path, resp.ContentLength, b, err)
		}
	}
}

// TestWriteHeaderRules: net/http's rules for WriteHeader — 1xx interim responses with the
// fields set so far, 204 and 304 without a body, a second call ignored and logged, a code
// outside 100–999 a panic.
func TestWriteHeaderRules(t *testing.T) {
	_, logs := captureLogs(t, true)
	errs := make(chan error, 1)
	_, addr := serveStd(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/hints":
			w.Header().Add("Link", "</a.css>; rel=preload")
			w.WriteHeader(http.StatusEarlyHints)
			w.Header().Del("Link")
			w.Header().Set("X-Final", "yes")
			io.WriteString(w, "done")
		case "/204":
			w.WriteHeader(http.StatusNoContent)
			_, err := io.WriteString(w, "body")
			errs <- err
		case "/304":
			w.Header().Set("ETag", `"x"`)
			w.WriteHeader(http.StatusNotModified)
		case "/twice":
			w.WriteHeader(http.StatusCreated)
			w.WriteHeader(http.StatusTeapot)
			io.WriteString(w, "made")
		case "/invalid":
			w.WriteHeader(1000)
		}
	}, core.Options{})
	cl := coretest.Dial(t, addr)

	cl.Send("GET /hints HTTP/1.1\r\nHost: h\r\n\r\n")
	resp, _ := cl.Response("GET")
	if resp.StatusCode != 103 || resp.Header.Get("Link") != "</a.css>; rel=preload" {
		t.Errorf("interim: %d %v", resp.StatusCode, resp.Header)
	}
	resp, body := cl.Response("GET")
	if resp.StatusCode != 200 || resp.Header.Get("Link") != "" || resp.Header.Get("X-Final") != "yes" ||
		body != "done" {
		t.Errorf("final after 103: %d %v %q", resp.StatusCode, resp.Header, body)
	}

	cl.Send("GET /204 HTTP/1.1\r\nHost: h\r\n\r\n")
	resp, body = cl.Response("GET")
	if err := <-errs; err != http.ErrBodyNotAllowed {
		t.Errorf("Write after 204: %v", err)
	}
	if resp.StatusCode != 204 || body != "" || resp.Header.Get("Content-Length") != "" {
		t.Errorf("204: %v %q", resp.Header, body)
	}
	cl.Send("GET /304 HTTP/1.1\r\nHost: h\r\n\r\n")
	resp, body = cl.Response("GET")
	if resp.StatusCode != 304 || body != "" || resp.Header.Get("ETag") != `"x"` {
		t.Errorf("304: %v %q", resp.Header, body)
	}

	cl.Send("GET /twice HTTP/1.1\r\nHost: h\r\n\r\n")
	resp, body = cl.Response("GET")
	if resp.StatusCode != 201 || body != "made" {
		t.Errorf("second WriteHeader: %d %q", resp.StatusCode, body)
	}
	if !strings.Contains(logs.String(), "superfluous WriteHeader") ||
		!strings.Contains(logs.String(), "writer_test.go") {
		t.Errorf("the second WriteHeader was not logged with its caller: %q", logs.String())
	}

	cl.Send("GET /invalid HTTP/1.1\r\nHost: h\r\n\r\n")
	if resp, _ = cl.Response("GET"); resp.StatusCode != 500 {
		t.Errorf("WriteHeader(1000): %d, want the 500 of a panic", resp.StatusCode)
	}
}

// TestResponseHeaderFields: the fields go out as net/http writes them — values with CR or LF
// made safe, invalid names dropped — and replace a dwell middleware's fields of the same name,
// keeping its others.
func TestResponseHeaderFields(t *testing.T) {
	bridged := Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Cache-Control", "max-age=60")
		h["X-Split"] = []string{"a\r\nSet-Cookie: evil=1"}
		h["Bad Name"] = []string{"x"}
		h.Add("Set-Cookie", "a=1")
		h.Add("Set-Cookie", "b=2")
		h.Set("Date", "Mon, 01 Jan 2024 00:00:00 GMT")
		h.Set("Trailer", "X-T")
		io.WriteString(w, "ok")
	}))
	mw := func(c *core.Ctx) { // a dwell middleware's fields, before the bridged handler's
		c.SetHeader("X-Request-Id", "mw")
		c.SetHeader("Cache-Control", "no-store")
		bridged(c)
	}
	_, addr := coretest.Serve(t, mw, core.Options{})
	cl := coretest.Dial(t, addr)
	cl.Send("GET / HTTP/1.1\r\nHost: h\r\n\r\n")
	resp, _ := cl.Response("GET")
	h := resp.Header
	if h.Get("X-Request-Id") != "mw" || fmt.Sprint(h["Cache-Control"]) != "[max-age=60]" ||
		h.Get("X-Split") != "a  Set-Cookie: evil=1" || fmt.Sprint(h["Set-Cookie"]) != "[a=1 b=2]" ||
		h.Get("Date") != "Mon, 01 Jan 2024 00:00:00 GMT" || h.Get("Trailer") != "" || h.Get("Bad Name") != "" {
		t.Errorf("fields: %v", h)
	}
}

// TestResponseHEAD: a HEAD request gets the head a GET would, with its Content-Length, and no
// body, though the handler writes one.
func TestResponseHEAD(t *testing.T) {
	_, addr := serveStd(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/get-only" && r.Method == http.MethodHead {
			return // as net/http: no Content-Length, which would have to be GET's
		}
		io.WriteString(w, strings.Repeat("x", 10000))
	}, core.Options{})
	c := coretest.Dial(t, addr)
	c.Send("HEAD /get-only HTTP/1.1\r\nHost: h\r\n\r\n")
	if resp, _ := c.Response("HEAD"); resp.StatusCode != 200 || resp.Header.Get("Content-Length") != "" {
		t.Errorf("HEAD with nothing written: %d, Content-Length %q", resp.StatusCode, resp.Header.Get("Content-Length"))
	}
	cl := coretest.Dial(t, addr)
	cl.Send("HEAD / HTTP/1.1\r\nHost: h\r\n\r\nGET / HTTP/1.1\r\nHost: h\r\n\r\n")
	resp, body := cl.Response("HEAD")
	if resp.ContentLength != 10000 || body != "" {
		t.Errorf("HEAD: Content-Length %d, body %q", resp.ContentLength, body)
	}
	if resp, body = cl.Response("GET"); len(body) != 10000 {
		t.Errorf("GET after HEAD: %d %d", resp.StatusCode, len(body))
	}
}

// TestRequestClose: r.Close says whether the connection ends after the request, as net/http
// has it: HTTP/1.0 unless kept alive (and not asked to close too), HTTP/1.1 when asked to close.
func TestRequestClose(t *testing.T) {
	_, addr := serveStd(t, func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, r.Close) }, core.Options{})
	for _, tc := range []struct{ req, want string }{
		{"GET / HTTP/1.0\r\n\r\n", "true"},
		{"GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n", "false"},
		{"GET / HTTP/1.0\r\nConnection: keep-alive, close\r\n\r\n", "true"},
		{"GET / HTTP/1.1\r\nHost: h\r\n\r\n", "false"},
		{"GET / HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n", "true"},
	} {
		cl := coretest.Dial(t, addr)
		cl.Send(tc.req)
		if _, body := cl.Response("GET"); body != tc.want {
			t.Errorf("%q: r.Close %s, want %s", tc.req, body, tc.want)
		}
	}
}

// TestCloseNotify: the deprecated http.CloseNotifier, which some libraries assert without a
// check (gin's Stream), is there, and tells of the client's leaving.
func TestCloseNotify(t *testing.T) {
	told := make(chan bool, 1)
	_, addr := serveStd(t, func(w http.ResponseWriter, r *http.Request) {
		gone := w.(interface{ CloseNotify() <-chan bool }).CloseNotify()
		w.WriteHeader(200)
		w.(http.Flusher).Flush()
		told <- <-gone
	}, core.Options{})
	cl := coretest.Dial(t, addr)
	cl.Send("GET / HTTP/1.1\r\nHost: h\r\n\r\n")
	cl.R.ReadString('\n') // the head went out: the handler waits for the client to leave
	cl.Close()
	if !coretest.Receive(t, "CloseNotify's value", told) {
		t.Fatal("CloseNotify sent false")
	}
}

// TestResponseController: http.NewResponseController flushes, and reports what the bridge
// does not do — read and write deadlines — as http.ErrNotSupported (its Hijack is
// TestHijackResponseController's).
func TestResponseController(t *testing.T) {
	results := make(chan string, 1)
	_, addr := serveStd(t, func(w http.ResponseWriter, r *http.Request) {
		rc := http.NewResponseController(w)
		var out []string
		check := func(name string, err error) {
			out = append(out, fmt.Sprintf("%s=%v", name, errors.Is(err, http.ErrNotSupported)))
		}
		check("read", rc.SetReadDeadline(time.Now().Add(time.Second)))
		check("write", rc.SetWriteDeadline(time.Now().Add(time.Second)))
		check("duplex", rc.EnableFullDuplex())
		io.WriteString(w, "first")
		check("flush", rc.Flush())
		results <- strings.Join(out, " ")
		<-r.Context().Done()
	}, core.Options{})
	cl := coretest.Dial(t, addr)
	cl.Send("GET / HTTP/1.1\r\nHost: h\r\n\r\n")
	if got := <-results; got != "read=true write=true duplex=false flush=false" {
		t.Errorf("controller: %s", got)
	}
	resp, err := http.ReadResponse(cl.R, nil)
	if err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 5)
	if _, err := io.ReadFull(resp.Body, b); err != nil || string(b) != "first" ||
		resp.TransferEncoding == nil {
		t.Errorf("flushed part: %q %v, chunked %v", b, err, resp.TransferEncoding)
	}
}
