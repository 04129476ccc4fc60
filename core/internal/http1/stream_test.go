package http1

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dwellhttp/dwell/core/internal/netpoll"
	"github.com/dwellhttp/dwell/core/internal/serve"
)

func TestStreamedResponseIsChunked(t *testing.T) {
	_, addr := startServer(t, func(c *serve.Ctx) {
		for i := range 3 {
			fmt.Fprintf(c, "piece %d;", i)
			if err := c.Flush(); err != nil {
				t.Error(err)
			}
		}
	}, serve.Options{})
	resp, err := http.Get("http://" + addr + "/")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "piece 0;piece 1;piece 2;" || len(resp.TransferEncoding) != 1 || resp.TransferEncoding[0] != "chunked" {
		t.Fatalf("body %q, transfer encoding %v", body, resp.TransferEncoding)
	}
}

func TestLargeBodySwitchesToStreaming(t *testing.T) {
	const size = 3 << 20
	_, addr := startServer(t, func(c *serve.Ctx) {
		piece := bytes.Repeat([]byte("0123456789abcdef"), 4096)
		for n := 0; n < size; n += len(piece) {
			c.Write(piece)
		}
	}, serve.Options{WriteHighWater: 128 << 10})
	resp, err := http.Get("http://" + addr + "/")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if len(body) != size || resp.ContentLength != -1 {
		t.Fatalf("%d bytes, Content-Length %d", len(body), resp.ContentLength)
	}
}

func TestDeclaredLengthStreams(t *testing.T) {
	_, addr := startServer(t, func(c *serve.Ctx) {
		switch c.Path() {
		case "/exact":
			c.SetHeader("Content-Length", "10")
			c.WriteString("01234")
			c.WriteString("56789")
		case "/over":
			c.SetHeader("Content-Length", "3")
			_, err := c.WriteString("abcdef")
			c.SetHeader("X-Ignored", "late")
			if err != serve.ErrBodyLength {
				t.Errorf("writing past Content-Length: %v", err)
			}
		case "/short":
			c.SetHeader("Content-Length", "10")
			c.WriteString("abc")
		}
	}, serve.Options{})
	c := dial(t, addr)
	c.Send("GET /exact HTTP/1.1\r\nHost: h\r\n\r\nGET /over HTTP/1.1\r\nHost: h\r\n\r\n")
	if resp, body := c.Response("GET"); body != "0123456789" || resp.ContentLength != 10 {
		t.Fatalf("%q %d", body, resp.ContentLength)
	}
	if _, body := c.Response("GET"); body != "abc" {
		t.Fatalf("%q", body)
	}
	// A body shorter than declared can only be ended by closing the connection.
	c.Send("GET /short HTTP/1.1\r\nHost: h\r\n\r\n")
	if _, err := readResp(c); err == nil {
		t.Fatal("short body read without error")
	}
	c.ExpectEOF()
}

func TestHTTP10StreamIsCloseDelimited(t *testing.T) {
	_, addr := startServer(t, func(c *serve.Ctx) {
		c.WriteString("a")
		c.Flush()
		c.WriteString("b")
	}, serve.Options{})
	c := dial(t, addr)
	c.Send("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
	all, _ := io.ReadAll(c.R)
	if !strings.HasSuffix(string(all), "\r\n\r\nab") || strings.Contains(string(all), "chunked") {
		t.Fatalf("%q", all)
	}
}

// TestSlowReaderBoundsMemory writes far more than the high-water mark to a client that reads
// slowly: the queue never holds more than the mark plus one piece, and every byte arrives.
func TestSlowReaderBoundsMemory(t *testing.T) {
	const hw = 64 << 10
	const piece = 16 << 10
	const total = 8 << 20
	maxQueued := make(chan int64, 1)
	_, addr := startServer(t, func(c *serve.Ctx) {
		var peak int64
		buf := bytes.Repeat([]byte{'x'}, piece)
		for n := 0; n < total; n += piece {
			if _, err := c.Write(buf); err != nil {
				t.Error(err)
				break
			}
			peak = max(peak, c.Carrier.Out.Size())
		}
		maxQueued <- peak
	}, serve.Options{WriteHighWater: hw})
	c := dial(t, addr)
	c.Send("GET / HTTP/1.1\r\nHost: h\r\n\r\n")
	resp, err := http.ReadResponse(c.R, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := 0
	buf := make([]byte, 32<<10)
	for {
		n, err := resp.Body.Read(buf)
		got += n
		if err != nil {
			break
		}
		if got < 1<<20 {
			time.Sleep(time.Millisecond) // slow at first, so the socket buffers fill
		}
	}
	if got != total {
		t.Fatalf("read %d bytes, want %d", got, total)
	}
	if peak := <-maxQueued; peak > hw+piece+64 {
		t.Fatalf("queue peaked at %d bytes; bound is %d", peak, hw+piece)
	}
}

func TestWriteToGoneClientFails(t *testing.T) {
	errc := make(chan error, 1)
	_, addr := startServer(t, func(c *serve.Ctx) {
		buf := make([]byte, 64<<10)
		for {
			if _, err := c.Write(buf); err != nil {
				errc <- err
				return
			}
		}
	}, serve.Options{})
	c := dial(t, addr)
	c.Send("GET / HTTP/1.1\r\nHost: h\r\n\r\n")
	c.R.Peek(1)
	c.Close()
	select {
	case err := <-errc:
		if err != serve.ErrClosed {
			t.Fatal(err)
		}
	case <-time.After(patience):
		t.Fatal("writer to a gone client never failed")
	}
}

// bodyEcho answers with the length and SHA-256 of the request body, and its trailers.
func bodyEcho(c *serve.Ctx) {
	h := sha256.New()
	buf := make([]byte, 4096)
	n := 0
	for {
		k, err := c.ReadBody(buf)
		h.Write(buf[:k])
		n += k
		if err == io.EOF {
			break
		}
		if err != nil {
			c.SetStatus(400)
			fmt.Fprintf(c, "error: %v", err)
			return
		}
	}
	fmt.Fprintf(c, "%d %x %s", n, h.Sum(nil)[:4], c.Trailer("X-Sum"))
}

func TestReadBody(t *testing.T) {
	_, addr := startServer(t, bodyEcho, serve.Options{})
	sum := func(s string) string {
		h := sha256.Sum256([]byte(s))
		return fmt.Sprintf("%x", h[:4])
	}
	c := dial(t, addr)
	c.Send("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\nhello")
	if _, body := c.Response("POST"); body != "5 "+sum("hello")+" " {
		t.Fatal(body)
	}
	c.Send("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\nX-Sum: yes\r\n\r\n")
	if _, body := c.Response("POST"); body != "11 "+sum("hello world")+" yes" {
		t.Fatal(body)
	}
	c.Send("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n")
	resp, body := c.Response("POST")
	if resp.StatusCode != 400 || !strings.Contains(body, "invalid chunk size") || !resp.Close {
		t.Fatalf("%d %q", resp.StatusCode, body)
	}
	c.ExpectEOF()
}

func TestExpectContinue(t *testing.T) {
	_, addr := startServer(t, func(c *serve.Ctx) {
		if c.Path() == "/refuse" {
			c.SetStatus(401)
			return
		}
		bodyEcho(c)
	}, serve.Options{})
	// Read: the 100 comes on the first read, then the final response.
	c := dial(t, addr)
	c.Send("POST /read HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n")
	line, _ := c.R.ReadString('\n')
	if line != "HTTP/1.1 100 Continue\r\n" {
		t.Fatalf("first line %q", line)
	}
	c.R.ReadString('\n')
	c.Send("hello")
	if resp, body := c.Response("POST"); resp.StatusCode != 200 || !strings.HasPrefix(body, "5 ") {
		t.Fatalf("%d %q", resp.StatusCode, body)
	}
	// Not read: no 100, the final response, and the connection closes since the body never came.
	c = dial(t, addr)
	c.Send("POST /refuse HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n")
	resp, _ := c.Response("POST")
	if resp.StatusCode != 401 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	c.ExpectEOF()
	// Not read but already sent: the body is discarded and the connection kept.
	c = dial(t, addr)
	c.Send("POST /refuse HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\nhelloGET /next HTTP/1.1\r\nHost: h\r\n\r\n")
	c.Response("POST")
	if resp, _ := c.Response("GET"); resp.StatusCode != 200 {
		t.Fatalf("next request: %d", resp.StatusCode)
	}
}

// TestUnreadBodyIsNeverARequest: a handler that ignores its body must not let the body's bytes run
// as a request (the smuggling of an unread streamed body).
func TestUnreadBodyIsNeverARequest(t *testing.T) {
	_, addr := startServer(t, func(c *serve.Ctx) { c.WriteString("served " + c.Path()) }, serve.Options{})
	smuggled := "GET /smuggled HTTP/1.1\r\nHost: h\r\n\r\n"
	for _, framing := range []string{
		fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(smuggled), smuggled),
		fmt.Sprintf("Transfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n0\r\n\r\n", len(smuggled), smuggled),
	} {
		c := dial(t, addr)
		c.Send("POST /upload HTTP/1.1\r\nHost: h\r\n" + framing + "GET /next HTTP/1.1\r\nHost: h\r\n\r\n")
		for _, want := range []string{"served /upload", "served /next"} {
			if _, body := c.Response("GET"); body != want {
				t.Fatalf("%q, want %q", body, want)
			}
		}
	}
}

// TestUnreadBodyDrainLimit: up to 256 KiB of unread body is skipped to keep the connection; more
// closes it.
func TestUnreadBodyDrainLimit(t *testing.T) {
	_, addr := startServer(t, func(c *serve.Ctx) { c.WriteString("ok") }, serve.Options{})
	small := strings.Repeat("x", 200<<10)
	c := dial(t, addr)
	go c.Send(fmt.Sprintf("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: %d\r\n\r\n%sGET / HTTP/1.1\r\nHost: h\r\n\r\n", len(small), small))
	c.Response("POST")
	if _, body := c.Response("GET"); body != "ok" {
		t.Fatal(body)
	}
	c = dial(t, addr)
	c.Send("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 10000000\r\n\r\npartial")
	resp, _ := c.Response("POST")
	if !resp.Close {
		t.Fatal("response before an undrainable body does not close")
	}
	c.ExpectEOF()
}

func TestChunkedBodyLimit(t *testing.T) {
	_, addr := startServer(t, func(c *serve.Ctx) {
		buf := make([]byte, 100)
		for {
			if _, err := c.ReadBody(buf); err != nil {
				return // the server answers 413 for us
			}
		}
	}, serve.Options{MaxBodyBytes: 10})
	c := dial(t, addr)
	c.Send("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n")
	resp, _ := c.Response("POST")
	if resp.StatusCode != 413 || !resp.Close {
		t.Fatalf("status %d close %v", resp.StatusCode, resp.Close)
	}
	c.ExpectEOF()
}

// TestPipelinedFloodIsBounded: a client that pipelines requests without reading responses does
// not make the server queue responses without bound; once it reads, every response arrives.
func TestPipelinedFloodIsBounded(t *testing.T) {
	const hw = 32 << 10
	const n = 3000
	var mu sync.Mutex
	var maxOut int64
	handled := 0
	var flooded *serve.Socket
	_, addr := startServer(t, func(c *serve.Ctx) {
		mu.Lock()
		maxOut = max(maxOut, c.Carrier.Out.Size())
		handled++
		flooded = &c.Exchange.(*conn).Socket
		mu.Unlock()
		c.Write(bytes.Repeat([]byte("r"), 1000))
	}, serve.Options{WriteHighWater: hw})
	c := dial(t, addr)
	req := strings.Repeat("GET / HTTP/1.1\r\nHost: h\r\n\r\n", n)
	go c.Write([]byte(req))
	// Nothing is read until the server has either answered every request (the socket buffers
	// took it all) or stopped taking them, its responses held back behind a socket that takes
	// no more: either lasts until the client reads.
	waitFor(t, "the server to answer every request or hold back", func() bool {
		mu.Lock()
		cn, all := flooded, handled == n
		mu.Unlock()
		if all || cn == nil {
			return all
		}
		stalled := make(chan bool, 1)
		cn.Loop.Post(func() { stalled <- cn.HeldBack && cn.Events()&netpoll.WatchWrite != 0 })
		return <-stalled
	})
	mu.Lock()
	t.Logf("%d of %d requests answered before the client read, the queue at most %d bytes", handled, n, maxOut)
	mu.Unlock()
	for i := range n {
		if _, body := c.Response("GET"); len(body) != 1000 {
			t.Fatalf("response %d: %d bytes", i, len(body))
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if maxOut > hw+4096 {
		t.Fatalf("queued %d bytes of responses for an unread client; bound is about %d", maxOut, hw)
	}
}
