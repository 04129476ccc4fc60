package body_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/dwellhttp/dwell/body"
	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/core/coretest"
)

// continueHandler: /read echoes a digest of the body (ReadAll), /discard drops it, /refuse
// answers 401 without reading, /small reads with a 10-byte limit.
func continueHandler(c *core.Ctx) {
	switch c.Path() {
	case "/refuse":
		c.SetStatus(401)
		c.WriteString("no")
	case "/discard":
		n, err := body.Discard(c)
		fmt.Fprintf(c, "discarded %d %v", n, err)
	case "/small":
		if _, err := body.ReadAll(c, 10); !errors.Is(err, core.ErrBodyTooLarge) {
			c.SetStatus(500)
			fmt.Fprintf(c, "ReadAll: %v", err)
		}
	default:
		b, err := body.ReadAll(c, 0)
		if err != nil {
			c.SetStatus(500)
			fmt.Fprintf(c, "ReadAll: %v", err)
			return
		}
		c.WriteString(digest(b))
	}
}

const continueLine = "HTTP/1.1 100 Continue\r\n"

// TestExpectContinueMatrix: Expect: 100-continue × {Content-Length, chunked} × {read, discarded,
// refused unread, refused by a limit} × {first request of a connection, after a kept-alive
// one}. The 100 goes out on the first read only, the final response follows, and the
// connection is kept exactly when the body was consumed.
func TestExpectContinueMatrix(t *testing.T) {
	_, addr := coretest.Serve(t, continueHandler, core.Options{})
	b := payload(5000, 7)
	for _, isChunked := range []bool{false, true} {
		for _, path := range []string{"/read", "/discard", "/refuse", "/small"} {
			for _, reused := range []bool{false, true} {
				name := fmt.Sprintf("chunked=%v%s/reused=%v", isChunked, path, reused)
				t.Run(name, func(t *testing.T) {
					c := dial(t, addr)
					if reused {
						c.Send(post("/read", []byte("warm"), false, ""))
						if _, got := c.Response("POST"); got != digest([]byte("warm")) {
							t.Fatalf("first request: %q", got)
						}
					}
					runContinue(t, c, path, b, isChunked)
				})
			}
		}
	}
}

func runContinue(t *testing.T, c *rawConn, path string, b []byte, isChunked bool) {
	req := post(path, b, isChunked, "Expect: 100-continue\r\n")
	head, bodyPart, _ := strings.Cut(req, "\r\n\r\n")
	c.Send(head + "\r\n\r\n")
	// A 10-byte limit refuses a declared length at once; a chunked body must be read to
	// find out, so the server asks for it.
	refused := path == "/refuse" || path == "/small" && !isChunked
	if refused {
		resp, got := c.Response("POST")
		want := map[string]int{"/refuse": 401, "/small": 413}[path]
		if resp.StatusCode != want || !resp.Close {
			t.Fatalf("%d %q close=%v, want %d and close", resp.StatusCode, got, resp.Close, want)
		}
		c.ExpectEOF() // the body was never sent, so the connection cannot go on
		return
	}
	line, err := c.R.ReadString('\n')
	if err != nil || line != continueLine {
		t.Fatalf("first line %q %v, want 100 Continue", line, err)
	}
	if blank, _ := c.R.ReadString('\n'); blank != "\r\n" {
		t.Fatalf("after the 100: %q", blank)
	}
	c.Send(bodyPart)
	resp, got := c.Response("POST")
	switch path {
	case "/read":
		if got != digest(b) || resp.StatusCode != 200 || resp.Close {
			t.Fatalf("%d %q close=%v", resp.StatusCode, got, resp.Close)
		}
	case "/discard":
		if got != fmt.Sprintf("discarded %d <nil>", len(b)) || resp.Close {
			t.Fatalf("%d %q close=%v", resp.StatusCode, got, resp.Close)
		}
	case "/small":
		if resp.StatusCode != 413 || !resp.Close {
			t.Fatalf("%d %q close=%v", resp.StatusCode, got, resp.Close)
		}
		return
	}
	// Kept alive: a plain request follows on the same connection.
	c.Send(post("/read", []byte("next"), false, ""))
	if _, got := c.Response("POST"); got != digest([]byte("next")) {
		t.Fatalf("next request: %q", got)
	}
}

// TestExpectContinueBodySentAnyway: a client that stops waiting for the 100 (curl does after a
// second) sends its body anyway; a handler that refused without reading still gets the
// connection kept, the body skipped and never parsed as a request.
func TestExpectContinueBodySentAnyway(t *testing.T) {
	_, addr := coretest.Serve(t, continueHandler, core.Options{})
	smuggled := "GET /read HTTP/1.1\r\nHost: h\r\n\r\n"
	for _, isChunked := range []bool{false, true} {
		c := dial(t, addr)
		c.Send(post("/refuse", []byte(smuggled), isChunked, "Expect: 100-continue\r\n") +
			post("/read", []byte("after"), false, ""))
		if resp, got := c.Response("POST"); resp.StatusCode != 401 || got != "no" {
			t.Fatalf("chunked=%v: %d %q", isChunked, resp.StatusCode, got)
		}
		if _, got := c.Response("POST"); got != digest([]byte("after")) {
			t.Fatalf("chunked=%v: next request got %q", isChunked, got)
		}
	}
}

// TestNoContinueWithoutRead: the server sends nothing until the handler reads, so a handler
// that waits first (authentication, say) has not yet invited the body.
func TestNoContinueWithoutRead(t *testing.T) {
	waiting := make(chan core.Waker, 1)
	_, addr := coretest.Serve(t, func(c *core.Ctx) {
		if c.Path() == "/other" {
			c.WriteString("other")
			return
		}
		waiting <- c.Waker()
		c.Suspend(0)
		b, _ := body.ReadAll(c, 0)
		c.WriteString(digest(b))
	}, core.Options{})
	c := dial(t, addr)
	c.Send("POST / HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nContent-Length: 3\r\n\r\n")
	w := coretest.Receive(t, "the handler", waiting)
	// The handler has parked without reading, and the loop (the only one) has since answered a
	// request on a connection made after that: what the server was to send the first client
	// before the handler reads has been sent, and is there to be read at once.
	other := dial(t, addr)
	other.Send("GET /other HTTP/1.1\r\nHost: h\r\n\r\n")
	if _, got := other.Response("GET"); got != "other" {
		t.Fatal(got)
	}
	c.expectNothing(50 * time.Millisecond)
	w.Wake(nil)
	if line, _ := c.R.ReadString('\n'); line != continueLine {
		t.Fatalf("%q", line)
	}
	c.R.ReadString('\n')
	c.Send("abc")
	if _, got := c.Response("POST"); got != digest([]byte("abc")) {
		t.Fatal(got)
	}
}
