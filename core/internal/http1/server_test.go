package http1

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dwellhttp/dwell/core/internal/serve"
)

func TestKeepAliveReusesConnection(t *testing.T) {
	var mu sync.Mutex
	peers := map[string]int{}
	_, addr := startServer(t, func(c *serve.Ctx) {
		mu.Lock()
		peers[c.RemoteAddr().String()]++
		mu.Unlock()
		c.WriteString(c.Path())
	}, serve.Options{})
	client := &http.Client{Transport: &http.Transport{MaxConnsPerHost: 1, MaxIdleConnsPerHost: 1}}
	defer client.CloseIdleConnections()
	for i := range 50 {
		resp, err := client.Get(fmt.Sprintf("http://%s/r%d", addr, i))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(body) != fmt.Sprintf("/r%d", i) {
			t.Fatalf("request %d: body %q", i, body)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(peers) != 1 {
		t.Fatalf("50 requests used %d connections, want 1", len(peers))
	}
}

func TestPipelinedInOrder(t *testing.T) {
	_, addr := startServer(t, func(c *serve.Ctx) { c.WriteString("resp " + c.Path()) }, serve.Options{})
	c := dial(t, addr)
	var sb strings.Builder
	for i := range 16 {
		fmt.Fprintf(&sb, "GET /%d HTTP/1.1\r\nHost: h\r\n\r\n", i)
	}
	c.Send(sb.String()) // one write
	for i := range 16 {
		resp, body := c.Response("GET")
		if resp.StatusCode != 200 || body != fmt.Sprintf("resp /%d", i) {
			t.Fatalf("response %d: %d %q", i, resp.StatusCode, body)
		}
	}
}

// TestPipelinedWithParkedHandler checks that a request behind a parked one waits its turn.
func TestPipelinedWithParkedHandler(t *testing.T) {
	_, addr := startServer(t, func(c *serve.Ctx) {
		if c.Path() == "/slow" {
			c.Suspend(50 * time.Millisecond)
		}
		c.WriteString(c.Path())
	}, serve.Options{})
	c := dial(t, addr)
	c.Send("GET /slow HTTP/1.1\r\nHost: h\r\n\r\nGET /fast HTTP/1.1\r\nHost: h\r\n\r\n")
	for _, want := range []string{"/slow", "/fast"} {
		if _, body := c.Response("GET"); body != want {
			t.Fatalf("got %q, want %q", body, want)
		}
	}
}

func TestByteAtATime(t *testing.T) {
	_, addr := startServer(t, func(c *serve.Ctx) {
		c.SetHeader("X-Header", c.Header("X-Test"))
		c.WriteString(c.Method() + " " + c.Target())
	}, serve.Options{})
	c := dial(t, addr)
	c.SetNoDelay(true)
	req := "\r\nPOST /a%20b?q=1 HTTP/1.1\r\nHost: h\r\nX-Test: value\r\nContent-Length: 0\r\n\r\n"
	for i := range len(req) {
		c.Send(req[i : i+1])
		time.Sleep(time.Millisecond)
	}
	resp, body := c.Response("POST")
	if body != "POST /a%20b?q=1" || resp.Header.Get("X-Header") != "value" {
		t.Fatalf("%q %v", body, resp.Header)
	}
}

func TestHTTP10(t *testing.T) {
	_, addr := startServer(t, helloHandler, serve.Options{})
	c := dial(t, addr)
	c.Send("GET / HTTP/1.0\r\n\r\n")
	resp, body := c.Response("GET")
	if body != "Hello World" || resp.ContentLength != 11 {
		t.Fatalf("%q %d", body, resp.ContentLength)
	}
	c.ExpectEOF()

	// HTTP/1.0 keep-alive is opt-in and echoed.
	c = dial(t, addr)
	c.Send("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
	resp, _ = c.Response("GET")
	if resp.Header.Get("Connection") != "keep-alive" {
		t.Fatalf("Connection: %q", resp.Header.Get("Connection"))
	}
	c.Send("GET / HTTP/1.0\r\n\r\n")
	if _, body := c.Response("GET"); body != "Hello World" {
		t.Fatal(body)
	}
	c.ExpectEOF()
}

func TestConnectionClose(t *testing.T) {
	_, addr := startServer(t, helloHandler, serve.Options{})
	c := dial(t, addr)
	c.Send("GET / HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\nGET /ignored HTTP/1.1\r\nHost: h\r\n\r\n")
	resp, _ := c.Response("GET")
	if !resp.Close {
		t.Fatal("response does not say Connection: close")
	}
	c.ExpectEOF()
}

func TestHalfCloseAfterRequest(t *testing.T) {
	_, addr := startServer(t, helloHandler, serve.Options{})
	c := dial(t, addr)
	c.Send("GET / HTTP/1.1\r\nHost: h\r\n\r\nGET / HTTP/1.1\r\nHost: h\r\n\r\n")
	c.CloseWrite()
	for range 2 {
		if _, body := c.Response("GET"); body != "Hello World" {
			t.Fatal(body)
		}
	}
	c.ExpectEOF()
}

func TestDateAndStatus(t *testing.T) {
	_, addr := startServer(t, func(c *serve.Ctx) {
		code, _ := strconv.Atoi(c.Query("code"))
		c.SetStatus(code)
		c.WriteString("x")
	}, serve.Options{})
	c := dial(t, addr)
	for _, code := range []int{200, 201, 404, 599, 299} {
		c.Send(fmt.Sprintf("GET /?code=%d HTTP/1.1\r\nHost: h\r\n\r\n", code))
		resp, _ := c.Response("GET")
		if resp.StatusCode != code {
			t.Fatalf("status %d, want %d", resp.StatusCode, code)
		}
		if _, err := http.ParseTime(resp.Header.Get("Date")); err != nil {
			t.Fatalf("Date %q: %v", resp.Header.Get("Date"), err)
		}
	}
	// 204 and 304 carry no body and no Content-Length (RFC 9110 §8.6, §15.3.5).
	for _, code := range []int{204, 304} {
		c.Send(fmt.Sprintf("GET /?code=%d HTTP/1.1\r\nHost: h\r\n\r\n", code))
		resp, body := c.Response("GET")
		if resp.StatusCode != code || body != "" || resp.Header.Get("Content-Length") != "" {
			t.Fatalf("%d: body %q, Content-Length %q", resp.StatusCode, body, resp.Header.Get("Content-Length"))
		}
	}
}

func TestHeadResponse(t *testing.T) {
	_, addr := startServer(t, helloHandler, serve.Options{})
	c := dial(t, addr)
	c.Send("HEAD / HTTP/1.1\r\nHost: h\r\n\r\nGET / HTTP/1.1\r\nHost: h\r\n\r\n")
	resp, body := c.Response("HEAD")
	if resp.ContentLength != 11 || body != "" {
		t.Fatalf("HEAD: length %d body %q", resp.ContentLength, body)
	}
	if _, body := c.Response("GET"); body != "Hello World" {
		t.Fatalf("GET after HEAD: %q", body)
	}
	// A handler that writes nothing for HEAD (it leaves the body to GET) gives no length: a
	// Content-Length must be GET's (RFC 9110 §8.6), which the server cannot know.
	_, addr = startServer(t, func(c *serve.Ctx) {
		if c.Method() != "HEAD" {
			c.WriteString("Hello World")
		}
	}, serve.Options{})
	c = dial(t, addr)
	c.Send("HEAD / HTTP/1.1\r\nHost: h\r\n\r\nGET / HTTP/1.1\r\nHost: h\r\n\r\n")
	if resp, _ := c.Response("HEAD"); resp.StatusCode != 200 || resp.Header.Get("Content-Length") != "" {
		t.Fatalf("HEAD with nothing written: %d, Content-Length %q", resp.StatusCode, resp.Header.Get("Content-Length"))
	}
	if _, body := c.Response("GET"); body != "Hello World" {
		t.Fatalf("GET after HEAD: %q", body)
	}
}

// TestContentLengthAfterWrite: a Content-Length declared after body bytes were written (held,
// the head not yet out) must count them all: one that is less panics (a 500, the held bytes
// dropped), rather than sending them behind a head that says fewer, where the rest would be
// read as the next response; one that counts them declares the body.
func TestContentLengthAfterWrite(t *testing.T) {
	_, addr := startServer(t, func(c *serve.Ctx) {
		switch c.Path() {
		case "/short":
			c.WriteString("hello world")
			c.SetHeader("Content-Length", "5")
			c.WriteString("!")
		case "/whole":
			c.WriteString("hello ")
			c.SetHeader("Content-Length", "11")
			c.WriteString("world")
		default:
			c.WriteString("next")
		}
	}, serve.Options{Logger: newTestLogger(&logBuffer{})})
	c := dial(t, addr)
	c.Send("GET /short HTTP/1.1\r\nHost: h\r\n\r\nGET /whole HTTP/1.1\r\nHost: h\r\n\r\n")
	if resp, body := c.Response("GET"); resp.StatusCode != 500 || strings.Contains(body, "hello") {
		t.Fatalf("Content-Length under the body written: %d %q", resp.StatusCode, body)
	}
	c = dial(t, addr)
	c.Send("GET /whole HTTP/1.1\r\nHost: h\r\n\r\nGET /next HTTP/1.1\r\nHost: h\r\n\r\n")
	if resp, body := c.Response("GET"); resp.ContentLength != 11 || body != "hello world" {
		t.Fatalf("Content-Length counting the body written: %d %q", resp.ContentLength, body)
	}
	if _, body := c.Response("GET"); body != "next" {
		t.Fatalf("the next response: %q", body)
	}
}

// TestConnectionCloseStays: Connection: close, once set, is not taken back by DelHeader, and
// ResponseHeader says so.
func TestConnectionCloseStays(t *testing.T) {
	said := make(chan string, 1)
	_, addr := startServer(t, func(c *serve.Ctx) {
		c.SetHeader("Connection", "close")
		c.DelHeader("Connection")
		said <- c.ResponseHeader("Connection")
	}, serve.Options{})
	c := dial(t, addr)
	c.Send("GET / HTTP/1.1\r\nHost: h\r\n\r\n")
	if resp, _ := c.Response("GET"); !resp.Close || <-said != "close" {
		t.Fatal("Connection: close was taken back, or not reported")
	}
}

// TestUpgradeConnectionOption: a response with an Upgrade field (a 426) lists Upgrade among
// its connection options (RFC 9110 §7.8), beside close or keep-alive when it has those.
func TestUpgradeConnectionOption(t *testing.T) {
	_, addr := startServer(t, func(c *serve.Ctx) {
		c.SetHeader("Upgrade", "websocket")
		c.SetStatus(426)
	}, serve.Options{})
	for req, want := range map[string]string{
		"GET / HTTP/1.1\r\nHost: h\r\n\r\n":                      "Upgrade",
		"GET / HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n": "close, Upgrade",
		"GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n":       "keep-alive, Upgrade",
	} {
		c := dial(t, addr)
		c.Send(req)
		var head strings.Builder // read raw: net/http's reader drops a Connection with close
		for {
			line, err := c.R.ReadString('\n')
			if err != nil || line == "\r\n" {
				break
			}
			head.WriteString(line)
		}
		if h := head.String(); !strings.Contains(h, " 426 ") || !strings.Contains(h, "\r\nConnection: "+want+"\r\n") {
			t.Errorf("%q: head %q, want Connection: %s", req, h, want)
		}
	}
}

func TestResponseHeaders(t *testing.T) {
	_, addr := startServer(t, func(c *serve.Ctx) {
		c.SetHeader("X-One", "1")
		c.AddHeader("Set-Cookie", "a=1")
		c.AddHeader("Set-Cookie", "b=2")
		c.SetHeader("X-Gone", "x")
		c.DelHeader("x-gone")
		c.SetHeader("Content-Type", "application/json")
		c.WriteString("{}")
	}, serve.Options{})
	c := dial(t, addr)
	c.Send("GET / HTTP/1.1\r\nHost: h\r\n\r\n")
	resp, _ := c.Response("GET")
	h := resp.Header
	if h.Get("X-One") != "1" || len(h["Set-Cookie"]) != 2 || h.Get("X-Gone") != "" || h.Get("Content-Type") != "application/json" {
		t.Fatalf("headers %v", h)
	}
}

func TestInvalidResponseHeaderPanics(t *testing.T) {
	logs := &logBuffer{}
	_, addr := startServer(t, func(c *serve.Ctx) {
		c.SetHeader("X-Bad", "a\r\nInjected: yes")
		c.WriteString("unreachable")
	}, serve.Options{Logger: newTestLogger(logs)})
	c := dial(t, addr)
	c.Send("GET / HTTP/1.1\r\nHost: h\r\n\r\n")
	resp, _ := c.Response("GET")
	if resp.StatusCode != 500 || resp.Header.Get("Injected") != "" {
		t.Fatalf("status %d, headers %v", resp.StatusCode, resp.Header)
	}
	if !strings.Contains(logs.String(), "invalid byte in the value of header field X-Bad") {
		t.Fatalf("log: %s", logs.String())
	}
}

func TestQueryAndHeaders(t *testing.T) {
	_, addr := startServer(t, func(c *serve.Ctx) {
		var sb strings.Builder
		for k, v := range c.Headers() {
			sb.WriteString(k + "=" + v + ";")
		}
		fmt.Fprintf(&sb, "q=%s raw=%s host=%s proto=%s", c.Query("q"), c.RawQuery(), c.Host(), c.Proto())
		c.WriteString(sb.String())
	}, serve.Options{})
	c := dial(t, addr)
	c.Send("GET /p?q=a+b%21 HTTP/1.1\r\nHost: example\r\nX-A:  1 \r\nx-b: 2\r\n\r\n")
	_, body := c.Response("GET")
	want := "Host=example;X-A=1;x-b=2;q=a b! raw=q=a+b%21 host=example proto=HTTP/1.1"
	if body != want {
		t.Fatalf("got  %q\nwant %q", body, want)
	}
}

func TestManyLoops(t *testing.T) {
	var mu sync.Mutex
	loops := map[*serve.Loop]bool{}
	_, addr := startServer(t, func(c *serve.Ctx) {
		mu.Lock()
		loops[c.Seam().Loop()] = true
		mu.Unlock()
		c.WriteString("ok")
	}, serve.Options{Loops: 4})
	var wg sync.WaitGroup
	for range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := dial(t, addr)
			c.Send("GET / HTTP/1.1\r\nHost: h\r\n\r\n")
			if _, body := c.Response("GET"); body != "ok" {
				t.Error(body)
			}
		}()
	}
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	if len(loops) < 2 {
		t.Fatalf("64 connections were served by %d loop(s) of 4", len(loops))
	}
}

func TestServeListener(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := newServer(helloHandler, serve.Options{Loops: 2, Logger: newTestLogger(&logBuffer{})})
	errc := make(chan error, 1)
	go func() { errc <- s.Serve(ln) }()
	for range 8 {
		c := dial(t, ln.Addr().String())
		c.Send("GET / HTTP/1.1\r\nHost: h\r\n\r\n")
		if _, body := c.Response("GET"); body != "Hello World" {
			t.Fatal(body)
		}
	}
	if err := s.Shutdown(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := <-errc; err != serve.ErrServerClosed {
		t.Fatal(err)
	}
	if _, err := net.Dial("tcp", ln.Addr().String()); err == nil {
		t.Fatal("listener still accepting after Shutdown")
	}
}

// TestZeroLoopsIsGOMAXPROCS: Loops zero means one loop per processor Go schedules on, as
// net/http uses every core.
func TestZeroLoopsIsGOMAXPROCS(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(3))
	s, _ := startServer(t, helloHandler, serve.Options{})
	<-s.Ready // the loops are made
	s.Mu.Lock()
	n := len(s.Loops)
	s.Mu.Unlock()
	if n != 3 {
		t.Fatalf("%d loops under GOMAXPROCS=3 with Loops zero, want 3", n)
	}
}
