package nethttp

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/core/coretest"
)

// hijackHandler is the handler of TestHijackHeadLikeNetHTTP: it sets a status with WriteHeader
// (or Write) before it hijacks, then writes raw bytes.
func hijackHandler(pre func(w http.ResponseWriter)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Test", "1")
		pre(w)
		conn, _, err := w.(http.Hijacker).Hijack()
		if err != nil {
			return
		}
		conn.Write([]byte("|raw|"))
		conn.Close()
	}
}

// rawExchange sends req to addr and returns everything the server sends until it closes, with
// the Date's value blanked.
func rawExchange(t *testing.T, addr, req string) string {
	t.Helper()
	cl := coretest.Dial(t, addr)
	cl.Send(req)
	b, err := io.ReadAll(cl.R)
	if err != nil {
		t.Fatalf("reading the exchange: %v", err)
	}
	return regexp.MustCompile(`Date: [^\r]*`).ReplaceAllString(string(b), "Date: *")
}

// TestHijackHeadLikeNetHTTP: a handler that sets a final status other than 101 before it
// hijacks gets the head net/http sends then — with Transfer-Encoding: chunked where net/http
// announces it — and the bytes it wrote but that were never flushed are dropped, as net/http
// drops them. The bridge and net/http's own server send the same bytes.
func TestHijackHeadLikeNetHTTP(t *testing.T) {
	cases := []struct {
		name, req string
		pre       func(w http.ResponseWriter)
	}{
		{"none", "GET", func(w http.ResponseWriter) {}},
		{"200", "GET", func(w http.ResponseWriter) { w.WriteHeader(200) }},
		{"200 HEAD", "HEAD", func(w http.ResponseWriter) { w.WriteHeader(200) }},
		{"204", "GET", func(w http.ResponseWriter) { w.WriteHeader(204) }},
		{"small write", "GET", func(w http.ResponseWriter) { io.WriteString(w, "hello") }},
		{"with length", "GET", func(w http.ResponseWriter) {
			w.Header().Set("Content-Length", "5")
			io.WriteString(w, "hello")
		}},
		{"unnamed status", "GET", func(w http.ResponseWriter) { w.WriteHeader(299) }},
		{"103 first", "GET", func(w http.ResponseWriter) {
			w.Header().Set("Link", "</a.css>; rel=preload")
			w.WriteHeader(103)
			w.Header().Del("Link")
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := hijackHandler(c.pre)
			_, bridge := serveStd(t, h, core.Options{})
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			srv := &http.Server{Handler: h}
			go srv.Serve(ln)
			t.Cleanup(func() { srv.Close() })
			req := c.req + " / HTTP/1.1\r\nHost: h\r\n\r\n"
			got, want := rawExchange(t, bridge, req), rawExchange(t, ln.Addr().String(), req)
			if got != want {
				t.Errorf("the bridge sent\n%q\nnet/http sent\n%q", got, want)
			}
		})
	}
}

// TestHijackRefused: a hijack the bridge cannot make fails, and the response goes on as HTTP: a
// request whose body has not been read to its end (net/http would hand the rest over raw), and
// a response part of which has gone (net/http would hijack after it).
func TestHijackRefused(t *testing.T) {
	_, addr := serveStd(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/flushed" {
			io.WriteString(w, "part ")
			w.(http.Flusher).Flush()
		}
		_, _, err := w.(http.Hijacker).Hijack()
		fmt.Fprintf(w, "refused: %v", err != nil)
	}, core.Options{})
	cl := coretest.Dial(t, addr)
	cl.Send("POST /body HTTP/1.1\r\nHost: h\r\nContent-Length: 10\r\n\r\n01234")
	if resp, body := cl.Response("POST"); resp.StatusCode != 200 || body != "refused: true" {
		t.Errorf("with the body unread: %d %q", resp.StatusCode, body)
	}
	cl = coretest.Dial(t, addr)
	cl.Send("GET /flushed HTTP/1.1\r\nHost: h\r\n\r\n")
	if resp, body := cl.Response("GET"); resp.StatusCode != 200 || body != "part refused: true" {
		t.Errorf("after a flush: %d %q", resp.StatusCode, body)
	}
	waitPoolIdle(t)
}

// TestHijackedHoldNoPlace: hijacked handlers waiting in Read for their clients hold no place in
// the pool: with a pool of 2, a GET to another bridged route is answered while 8 of them wait;
// then each still echoes, and once they have returned the pool is idle.
func TestHijackedHoldNoPlace(t *testing.T) {
	setHTTPWorkers(t, 2)
	const n = 8
	reading := make(chan struct{}, n)
	ended := make(chan error, n)
	r := newMux()
	r.HandleHTTP("GET", "/ws", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, brw := hijack(t, w)
		defer conn.Close()
		reading <- struct{}{}
		echo(conn, brw, ended)
	}))
	r.HandleHTTP("GET", "/bridge", http.HandlerFunc(bridgeGET))
	_, addr := coretest.Serve(t, r.Handler(), core.Options{})
	var conns []*coretest.Conn
	for range n {
		cl := coretest.Dial(t, addr)
		cl.Send("GET /ws HTTP/1.1\r\nHost: h\r\n\r\n")
		conns = append(conns, cl)
		coretest.Receive(t, "a hijacked handler reading", reading)
	}
	getBridge(t, addr, fmt.Sprintf("while %d hijacked handlers wait for their clients", n))
	for i, cl := range conns {
		msg := fmt.Sprintf("ping %d", i)
		cl.Send(msg)
		if got := readN(t, cl.R, len(msg)); got != msg {
			t.Errorf("connection %d echoed %q", i, got)
		}
		cl.Close()
	}
	for range n {
		coretest.Receive(t, "a hijacked handler ending", ended)
	}
	waitPoolIdle(t)
}

// TestHijackInputBounded: a client that sends far more than its handler reads is held back by
// TCP's flow control (the bound itself is core's: TestHandOverConnInputBounded), and every byte
// arrives in order as the handler catches up.
func TestHijackInputBounded(t *testing.T) {
	conns := make(chan net.Conn, 1)
	start := make(chan struct{})
	const total = 8 << 20
	sum := make(chan string, 1)
	_, addr := serveStd(t, func(w http.ResponseWriter, r *http.Request) {
		conn, _ := hijack(t, w)
		defer conn.Close()
		conns <- conn
		<-start
		b, err := io.ReadAll(io.LimitReader(conn, total))
		sum <- fmt.Sprint(len(b), err, b[len(b)-1])
	}, core.Options{})
	cl := coretest.Dial(t, addr)
	cl.Send("GET / HTTP/1.1\r\nHost: h\r\n\r\n")
	coretest.Receive(t, "the hijacked connection", conns)
	go func() {
		data := make([]byte, total)
		for i := range data {
			data[i] = byte(i % 251)
		}
		cl.Write(data) // blocks until the handler reads: the test ends the connection otherwise
	}()
	close(start)
	if got, want := coretest.Receive(t, "the handler's read", sum), fmt.Sprint(total, nil, byte((total-1)%251)); got != want {
		t.Errorf("read %s, want %s", got, want)
	}
}

// TestHijackLargeWrite: a handler's writes far past the high-water mark, to a client with a
// small receive buffer, wait for the client as they must, and all arrive in order.
func TestHijackLargeWrite(t *testing.T) {
	const total = 4 << 20
	data := make([]byte, total)
	for i := range data {
		data[i] = byte(i % 251)
	}
	_, addr := serveStd(t, func(w http.ResponseWriter, r *http.Request) {
		conn, _ := hijack(t, w)
		defer conn.Close()
		for off := 0; off < total; off += 7000 { // pieces across the bridge's buffer sizes
			if _, err := conn.Write(data[off:min(off+7000, total)]); err != nil {
				t.Errorf("Write: %v", err)
				return
			}
		}
	}, core.Options{WriteHighWater: 64 << 10})
	cl := coretest.Dial(t, addr)
	cl.SetReadBuffer(16 << 10)
	cl.Send("GET / HTTP/1.1\r\nHost: h\r\n\r\n")
	b, err := io.ReadAll(cl.R)
	if err != nil || !bytes.Equal(b, data) {
		t.Fatalf("read %d bytes (%v), want the %d written", len(b), err, total)
	}
}

// TestHijackShutdown: a shutdown ends a hijacked connection's input — the handler's Read returns
// io.EOF — while its writes still go out, so that a handler can say goodbye and close, and the
// shutdown does not wait its grace period for it.
func TestHijackShutdown(t *testing.T) {
	reading := make(chan struct{})
	s, addr := serveStd(t, func(w http.ResponseWriter, r *http.Request) {
		conn, _ := hijack(t, w)
		defer conn.Close()
		close(reading)
		if _, err := conn.Read(make([]byte, 1)); err != io.EOF {
			t.Errorf("Read at a shutdown: %v, want io.EOF", err)
		}
		conn.Write([]byte("going away"))
	}, core.Options{})
	cl := coretest.Dial(t, addr)
	cl.Send("GET / HTTP/1.1\r\nHost: h\r\n\r\n")
	<-reading
	done := make(chan error, 1)
	go func() { done <- s.Shutdown(t.Context()) }()
	if got := readN(t, cl.R, len("going away")); got != "going away" {
		t.Fatalf("%q", got)
	}
	cl.ExpectEOF()
	cl.Close() // the server lingers until the client closes too
	if err := coretest.Receive(t, "the shutdown", done); err != nil {
		t.Errorf("Shutdown: %v", err)
	}
}

// TestHijackAbandoned: a connection whose handler returns without closing it, keeping no
// reference, is closed once its net.Conn is collected, as net/http's is.
func TestHijackAbandoned(t *testing.T) {
	_, addr := serveStd(t, func(w http.ResponseWriter, r *http.Request) {
		conn, _ := hijack(t, w)
		conn.Write([]byte("left"))
	}, core.Options{})
	cl := coretest.Dial(t, addr)
	cl.Send("GET / HTTP/1.1\r\nHost: h\r\n\r\n")
	if got := readN(t, cl.R, 4); got != "left" {
		t.Fatalf("%q", got)
	}
	eof := make(chan error, 1)
	go func() {
		_, err := cl.R.ReadByte()
		eof <- err
	}()
	coretest.WaitFor(t, "the abandoned connection closed", func() bool {
		runtime.GC()
		select {
		case err := <-eof:
			if err != io.EOF {
				t.Errorf("the client read %v, want io.EOF", err)
			}
			return true
		default:
			return false
		}
	})
	waitPoolIdle(t)
}

// TestHijackPanic: a panic after the hijack is logged, as net/http logs one; there is no
// response left to answer it with.
func TestHijackPanic(t *testing.T) {
	_, logs := captureLogs(t, true)
	_, addr := serveStd(t, func(w http.ResponseWriter, r *http.Request) {
		conn, _ := hijack(t, w)
		defer conn.Close()
		panic("after the hijack")
	}, core.Options{})
	cl := coretest.Dial(t, addr)
	cl.Send("GET / HTTP/1.1\r\nHost: h\r\n\r\n")
	cl.ExpectEOF()
	coretest.WaitFor(t, "the panic logged", func() bool { return strings.Contains(logs.String(), "after the hijack") })
	waitPoolIdle(t)
}
