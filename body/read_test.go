package body_test

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"testing"

	"github.com/dwellhttp/dwell/body"
	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/core/coretest"
)

// TestReadAllLimits: ReadAll's own limit and the server's MaxBodyBytes, for declared and chunked
// bodies, at and past the limit.
func TestReadAllLimits(t *testing.T) {
	errs := make(chan error, 1)
	_, addr := coretest.Serve(t, func(c *core.Ctx) {
		max := int64(10)
		if c.Path() == "/nolimit" {
			max = 0
		}
		b, err := body.ReadAll(c, max)
		errs <- err
		if err == nil {
			c.WriteString(string(b))
		}
	}, core.Options{MaxBodyBytes: 20})
	_, unbounded := coretest.Serve(t, func(c *core.Ctx) {
		b, err := body.ReadAll(c, math.MaxInt64) // a bound no body reaches
		if err != nil {
			c.SetStatus(500)
		}
		c.Write(b)
	}, core.Options{})
	for _, chunked := range []bool{false, true} {
		c := dial(t, unbounded)
		c.Send(post("/", []byte("hello"), chunked, ""))
		if resp, got := c.Response("POST"); resp.StatusCode != 200 || got != "hello" {
			t.Errorf("ReadAll(c, math.MaxInt64), chunked %v: %d %q", chunked, resp.StatusCode, got)
		}
	}
	cases := []struct {
		name    string
		req     string
		status  int
		body    string
		wantErr error // nil: the handler was not reached or succeeded
		reached bool
	}{
		{"length at limit", post("/", []byte("0123456789"), false, ""), 200, "0123456789", nil, true},
		{"chunked at limit", post("/", []byte("0123456789"), true, ""), 200, "0123456789", nil, true},
		{"length over limit", post("/", []byte("0123456789a"), false, ""), 413, "", core.ErrBodyTooLarge, true},
		{"chunked over limit", post("/", []byte("0123456789a"), true, ""), 413, "", core.ErrBodyTooLarge, true},
		{"empty", post("/", nil, false, ""), 200, "", nil, true},
		{"empty chunked", post("/", nil, true, ""), 200, "", nil, true},
		// MaxBodyBytes: a declared length over it fails the body before any of it is read; the
		// handler (and its middleware) still runs, and the 413 is its answer.
		{"length over server limit", post("/nolimit", payload(21, 1), false, ""), 413, "", core.ErrBodyTooLarge, true},
		{"chunked over server limit", post("/nolimit", payload(21, 1), true, ""), 413, "", core.ErrBodyTooLarge, true},
		{"chunked at server limit", post("/nolimit", []byte("01234567890123456789"), true, ""), 200, "01234567890123456789", nil, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := dial(t, addr)
			c.Send(tc.req)
			resp, got := c.Response("POST")
			if resp.StatusCode != tc.status || tc.status == 200 && got != tc.body {
				t.Fatalf("%d %q, want %d %q", resp.StatusCode, got, tc.status, tc.body)
			}
			if tc.status == 413 {
				if !resp.Close {
					t.Fatal("413 without Connection: close")
				}
				c.ExpectEOF()
			}
			if !tc.reached {
				select {
				case err := <-errs:
					t.Fatalf("handler reached (%v)", err)
				default:
				}
				return
			}
			err := <-errs
			if err != tc.wantErr {
				t.Fatalf("ReadAll error %v, want %v", err, tc.wantErr)
			}
			if err != nil && !errors.Is(err, core.ErrBodyTooLarge) {
				t.Fatal("the error is not a core.ErrBodyTooLarge")
			}
		})
	}
}

// TestReadAllRefusalCanBeReplaced: after core.ErrBodyTooLarge the handler may answer as it likes; the
// connection still closes, since the body was left unread.
func TestReadAllRefusalCanBeReplaced(t *testing.T) {
	_, addr := coretest.Serve(t, func(c *core.Ctx) {
		if _, err := body.ReadAll(c, 4); err != nil {
			c.SetStatus(400)
			c.SetHeader("Content-Type", "application/json")
			c.WriteString(`{"error":"too large"}`)
		}
	}, core.Options{})
	c := dial(t, addr)
	c.Send(post("/", payload(300_000, 3), false, ""))
	resp, got := c.Response("POST")
	if resp.StatusCode != 400 || got != `{"error":"too large"}` || !resp.Close {
		t.Fatalf("%d %q close=%v", resp.StatusCode, got, resp.Close)
	}
	c.ExpectEOF()
}

// TestReadErrorsAreSticky: a malformed chunked body fails every later read the same way; a
// handler that writes nothing gets the server's 400 and the connection closes.
func TestReadErrorsAreSticky(t *testing.T) {
	errs := make(chan [3]error, 1)
	_, addr := coretest.Serve(t, func(c *core.Ctx) {
		var e [3]error
		buf := make([]byte, 64)
		for i := range e {
			for e[i] == nil {
				_, e[i] = c.ReadBody(buf)
			}
		}
		if c.BodyErr() != e[0] {
			e[2] = fmt.Errorf("BodyErr %v", c.BodyErr())
		}
		errs <- e
	}, core.Options{})
	c := dial(t, addr)
	c.Send("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\nzz\r\nGET / HTTP/1.1\r\nHost: h\r\n\r\n")
	resp, got := c.Response("POST")
	if resp.StatusCode != 400 || !resp.Close || !strings.Contains(got, "invalid chunk size") {
		t.Fatalf("%d %q close=%v", resp.StatusCode, got, resp.Close)
	}
	c.ExpectEOF()
	e := <-errs
	if e[0] == nil || e[0] == io.EOF || e[1] != e[0] || e[2] != e[0] {
		t.Fatalf("errors %v", e)
	}
}

// TestTruncatedBody: a client that stops mid-body makes the read fail with io.ErrUnexpectedEOF.
func TestTruncatedBody(t *testing.T) {
	for _, isChunked := range []bool{false, true} {
		errs := make(chan error, 1)
		_, addr := coretest.Serve(t, func(c *core.Ctx) {
			_, err := io.Copy(io.Discard, body.Reader(c))
			errs <- err
		}, core.Options{})
		c := dial(t, addr)
		req := post("/", payload(10_000, 1), isChunked, "")
		c.Send(req[:len(req)-100])
		c.CloseWrite()
		if err := <-errs; err != io.ErrUnexpectedEOF {
			t.Fatalf("chunked=%v: %v", isChunked, err)
		}
	}
}

// TestReaderAndDiscard: Reader feeds io.Copy and a hash; Discard consumes whatever is left and
// keeps the connection, also past the 256 KiB the server would skip by itself.
func TestReaderAndDiscard(t *testing.T) {
	_, addr := coretest.Serve(t, func(c *core.Ctx) {
		if c.Path() == "/discard" {
			head := make([]byte, 10)
			io.ReadFull(body.Reader(c), head)
			n, err := body.Discard(c)
			fmt.Fprintf(c, "%s+%d %v", head, n, err)
			return
		}
		h := sha256.New()
		n, err := io.Copy(h, body.Reader(c))
		fmt.Fprintf(c, "%d %x %v", n, h.Sum(nil)[:6], err)
	}, core.Options{})
	big := payload(1<<20, 9)
	sum := sha256.Sum256(big)
	for _, isChunked := range []bool{false, true} {
		c := dial(t, addr)
		go c.write(post("/copy", big, isChunked, "")+post("/discard", big, isChunked, ""), false)
		if _, got := c.Response("POST"); got != fmt.Sprintf("%d %x <nil>", len(big), sum[:6]) {
			t.Fatalf("chunked=%v: %q", isChunked, got)
		}
		resp, got := c.Response("POST")
		if got != fmt.Sprintf("%s+%d <nil>", big[:10], len(big)-10) || resp.Close {
			t.Fatalf("chunked=%v: %q close=%v", isChunked, got, resp.Close)
		}
	}
}
