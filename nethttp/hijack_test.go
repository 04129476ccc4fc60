package nethttp

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/core/coretest"
)

// readN reads exactly n bytes from r, failing the test otherwise.
func readN(t *testing.T, r io.Reader, n int) string {
	t.Helper()
	b := make([]byte, n)
	if _, err := io.ReadFull(r, b); err != nil {
		t.Fatalf("reading %d bytes: %v (got %q)", n, err, b)
	}
	return string(b)
}

// hijack hijacks w, failing the test (from the handler's goroutine) when it cannot.
func hijack(t *testing.T, w http.ResponseWriter) (net.Conn, *bufio.ReadWriter) {
	conn, brw, err := w.(http.Hijacker).Hijack()
	if err != nil {
		t.Errorf("Hijack: %v", err)
		panic(http.ErrAbortHandler)
	}
	return conn, brw
}

// echo copies what conn's reader gives back to conn until the client leaves, and reports how the
// reading ended.
func echo(conn net.Conn, r io.Reader, ended chan<- error) {
	buf := make([]byte, 1024)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			if _, werr := conn.Write(buf[:n]); werr != nil {
				ended <- werr
				return
			}
		}
		if err != nil {
			ended <- err
			return
		}
	}
}

// TestHijackRaw: a handler that sets no status hijacks the connection with nothing sent, and
// echoes through the bufio.ReadWriter what the client sends — the bytes that came with the
// request first; the client leaving ends its Read with io.EOF. r.Context() stays alive after the
// hijack, and is cancelled once the handler has returned.
func TestHijackRaw(t *testing.T) {
	ended := make(chan error, 1)
	ctxs := make(chan context.Context, 1)
	_, addr := serveStd(t, func(w http.ResponseWriter, r *http.Request) {
		conn, brw := hijack(t, w)
		if err := r.Context().Err(); err != nil {
			t.Errorf("r.Context() after Hijack: %v", err)
		}
		ctxs <- r.Context()
		if n := brw.Reader.Buffered(); n != 0 {
			t.Errorf("%d bytes buffered in the hijacked reader, want them in the conn's Read", n)
		}
		echo(conn, brw, ended)
		conn.Close()
	}, core.Options{})
	cl := coretest.Dial(t, addr)
	cl.Send("GET /raw HTTP/1.1\r\nHost: h\r\n\r\nEARLY")
	if got := readN(t, cl.R, 5); got != "EARLY" {
		t.Fatalf("%q, want the bytes that came with the request and nothing of HTTP's", got)
	}
	ctx := coretest.Receive(t, "the hijacked request's context", ctxs)
	for _, s := range []string{"more", strings.Repeat("x", 100<<10)} {
		cl.Send(s)
		if got := readN(t, cl.R, len(s)); got != s {
			t.Fatalf("echoed %d bytes, want %d", len(got), len(s))
		}
	}
	if err := ctx.Err(); err != nil {
		t.Errorf("the request's context while the hijacked handler runs: %v", err)
	}
	cl.CloseWrite()
	if err := coretest.Receive(t, "the handler's Read ending", ended); err != io.EOF {
		t.Errorf("Read after the client left: %v, want io.EOF", err)
	}
	cl.ExpectEOF()
	coretest.WaitFor(t, "the context cancelled once the handler returned", func() bool { return ctx.Err() != nil })
	waitPoolIdle(t)
}

// TestHijackEarlyBytesNotARequest: bytes that came with the head of a request that may switch
// protocols and cannot start another request — a WebSocket frame sent before the 101 came — are
// the hijacked connection's too, though the bridge's dwell handler parks before its net/http
// handler hijacks (core keeps what follows such a request's head, within its bound).
func TestHijackEarlyBytesNotARequest(t *testing.T) {
	ended := make(chan error, 1)
	_, addr := serveStd(t, func(w http.ResponseWriter, r *http.Request) {
		conn, brw := hijack(t, w)
		defer conn.Close()
		echo(conn, brw, ended)
	}, core.Options{})
	cl := coretest.Dial(t, addr)
	early := "hello\n\x81\x82\x00\x00\x00\x00hi"
	cl.Send("GET / HTTP/1.1\r\nHost: h\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\n" + early)
	if got := readN(t, cl.R, len(early)); got != early {
		t.Fatalf("%q, want the bytes that came with the request", got)
	}
}

// TestHijackAfter101: WriteHeader(101) then Hijack, as coder/websocket does: the 101 goes out
// first, with the handler's fields and Connection: Upgrade, then the connection is the handler's.
// A Flush between the two (net/http sends the head there) leaves the 101 to the Hijack.
func TestHijackAfter101(t *testing.T) {
	for _, flush := range []bool{false, true} {
		t.Run(fmt.Sprint("flush=", flush), func(t *testing.T) {
			ended := make(chan error, 1)
			_, addr := serveStd(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Upgrade", "echo")
				w.Header().Set("Connection", "Upgrade")
				w.WriteHeader(http.StatusSwitchingProtocols)
				if flush {
					if err := http.NewResponseController(w).Flush(); err != nil {
						t.Errorf("Flush after WriteHeader(101): %v", err)
					}
				}
				conn, brw := hijack(t, w)
				defer conn.Close()
				echo(conn, brw, ended)
			}, core.Options{})
			cl := coretest.Dial(t, addr)
			cl.Send("GET /up HTTP/1.1\r\nHost: h\r\nUpgrade: echo\r\nConnection: Upgrade\r\n\r\nhello")
			resp, err := http.ReadResponse(cl.R, nil)
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != 101 || resp.Header.Get("Upgrade") != "echo" || resp.Header.Get("Connection") != "Upgrade" ||
				resp.Header.Get("Content-Length") != "" || resp.Header.Get("Content-Type") != "" {
				t.Fatalf("the switch: %d %v", resp.StatusCode, resp.Header)
			}
			if got := readN(t, cl.R, 5); got != "hello" {
				t.Fatalf("echoed %q", got)
			}
			cl.Close()
			if err := coretest.Receive(t, "the handler's Read ending", ended); err != io.EOF {
				t.Errorf("Read after the client left: %v, want io.EOF", err)
			}
			waitPoolIdle(t)
		})
	}
}

// TestHijackResponseController: http.NewResponseController finds Hijack; after it, the
// ResponseWriter behaves as net/http's does after a hijack: Write fails with http.ErrHijacked
// (and is logged), so do Flush and a second Hijack, WriteHeader is logged and ignored.
func TestHijackResponseController(t *testing.T) {
	_, logs := captureLogs(t, true)
	results := make(chan []error, 1)
	_, addr := serveStd(t, func(w http.ResponseWriter, r *http.Request) {
		rc := http.NewResponseController(w)
		conn, _, err := rc.Hijack()
		if err != nil {
			t.Errorf("ResponseController.Hijack: %v", err)
			return
		}
		defer conn.Close()
		_, werr := io.WriteString(w, "late")
		w.WriteHeader(500)
		_, _, herr := rc.Hijack()
		_, rerr := w.(io.ReaderFrom).ReadFrom(strings.NewReader("late"))
		results <- []error{werr, herr, rc.Flush(), rerr}
		conn.Write([]byte("raw"))
	}, core.Options{})
	cl := coretest.Dial(t, addr)
	cl.Send("GET / HTTP/1.1\r\nHost: h\r\n\r\n")
	for i, err := range coretest.Receive(t, "the calls after Hijack", results) {
		if !errors.Is(err, http.ErrHijacked) {
			t.Errorf("call %d after Hijack: %v, want http.ErrHijacked", i, err)
		}
	}
	if got := readN(t, cl.R, 3); got != "raw" {
		t.Fatalf("%q, want the hijacked connection's bytes alone", got)
	}
	cl.ExpectEOF()
	if s := logs.String(); !strings.Contains(s, "Write on a hijacked connection") ||
		!strings.Contains(s, "WriteHeader on a hijacked connection") || !strings.Contains(s, "hijack_test.go") {
		t.Errorf("logs: %s", s)
	}
}

// TestHijackClose: Close from the handler sends what was written before, then closes the TCP
// connection; a Read after it fails with net.ErrClosed, and so do a Write and a second Close;
// r.Context() is cancelled once the connection has closed.
func TestHijackClose(t *testing.T) {
	after := make(chan []error, 1)
	_, addr := serveStd(t, func(w http.ResponseWriter, r *http.Request) {
		conn, _ := hijack(t, w)
		conn.Write([]byte("bye"))
		if err := conn.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		_, rerr := conn.Read(make([]byte, 1))
		_, werr := conn.Write([]byte("x"))
		after <- []error{rerr, werr, conn.Close()}
		// The connection's close ends the request, whose context r's is (see Handler).
		<-r.Context().Done()
	}, core.Options{})
	cl := coretest.Dial(t, addr)
	cl.Send("GET / HTTP/1.1\r\nHost: h\r\n\r\n")
	if got := readN(t, cl.R, 3); got != "bye" {
		t.Fatalf("%q", got)
	}
	cl.ExpectEOF()
	cl.Close() // the server lingers until the client closes too
	for i, err := range coretest.Receive(t, "the calls after Close", after) {
		if !errors.Is(err, net.ErrClosed) {
			t.Errorf("call %d after Close: %v, want net.ErrClosed", i, err)
		}
	}
	waitPoolIdle(t)
}

// TestHijackClientLeaves: a client that leaves without sending anything more ends the
// handler's waiting Read with io.EOF, and its writes fail from then on.
func TestHijackClientLeaves(t *testing.T) {
	ended := make(chan []error, 1)
	reading := make(chan struct{})
	_, addr := serveStd(t, func(w http.ResponseWriter, r *http.Request) {
		conn, _ := hijack(t, w)
		defer conn.Close()
		close(reading)
		_, rerr := conn.Read(make([]byte, 1))
		_, werr := conn.Write([]byte("anyone?"))
		ended <- []error{rerr, werr}
	}, core.Options{})
	cl := coretest.Dial(t, addr)
	cl.Send("GET / HTTP/1.1\r\nHost: h\r\n\r\n")
	<-reading
	cl.Close()
	errs := coretest.Receive(t, "the handler's Read ending", ended)
	if errs[0] != io.EOF || errs[1] == nil {
		t.Errorf("after the client left: Read %v, Write %v; want io.EOF and an error", errs[0], errs[1])
	}
	waitPoolIdle(t)
}
