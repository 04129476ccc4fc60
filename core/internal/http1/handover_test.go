package http1

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/dwellhttp/dwell/core/internal/serve"
	"github.com/dwellhttp/dwell/core/internal/servetest"
)

// readN reads exactly n bytes, failing the test otherwise.
func readN(t *testing.T, r io.Reader, n int) string {
	t.Helper()
	b := make([]byte, n)
	if _, err := io.ReadFull(r, b); err != nil {
		t.Fatalf("reading %d bytes: %v (got %q)", n, err, b)
	}
	return string(b)
}

// TestHandOverAfter101: a handler answers 101 and hands the connection to a protocol: the 101
// goes out with the handler's fields alone, then the bytes that came behind the request's head,
// and those sent after, go to the protocol, and what it writes comes back; its Close ends the
// connection, and its Closed hears nil.
func TestHandOverAfter101(t *testing.T) {
	p := servetest.NewEcho("")
	_, addr := startServer(t, func(c *serve.Ctx) {
		c.SetStatus(101)
		c.SetHeader("Upgrade", "echo")
		c.SetHeader("Connection", "Upgrade")
		if _, err := c.HandOver(p); err != nil {
			t.Errorf("HandOver: %v", err)
		}
		if _, err := c.WriteString("late"); err == nil {
			t.Error("the handler wrote to a response it had handed over")
		}
	}, serve.Options{})
	c := dial(t, addr)
	c.Send("GET /up HTTP/1.1\r\nHost: h\r\nUpgrade: echo\r\nConnection: Upgrade\r\n\r\nEARLY")
	resp, err := http.ReadResponse(c.R, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 101 || resp.Header.Get("Upgrade") != "echo" || resp.Header.Get("Content-Length") != "" ||
		resp.Header.Get("Content-Type") != "" || resp.Header.Get("Connection") != "Upgrade" {
		t.Fatalf("the switch: %d %v", resp.StatusCode, resp.Header)
	}
	if got := readN(t, c.R, 5); got != "EARLY" {
		t.Fatalf("the bytes that came with the request: %q", got)
	}
	c.Send("more")
	if got := readN(t, c.R, 4); got != "more" {
		t.Fatalf("echoed %q", got)
	}
	c.Send("bye")
	c.ExpectEOF()
	if err := receive(t, "Closed", p.Done); err != nil {
		t.Fatalf("Closed after Close: %v", err)
	}
}

// TestHandOverRaw: with no status set, the connection is handed over with nothing sent, as
// net/http's Hijack does; the client leaving is the protocol's Closed with ErrClosed.
func TestHandOverRaw(t *testing.T) {
	p := servetest.NewEcho("raw:")
	_, addr := startServer(t, func(c *serve.Ctx) {
		if _, err := c.HandOver(p); err != nil {
			t.Errorf("HandOver: %v", err)
		}
	}, serve.Options{})
	c := dial(t, addr)
	c.Send("GET /raw HTTP/1.1\r\nHost: h\r\n\r\nhello")
	if got := readN(t, c.R, 9); got != "raw:hello" {
		t.Fatalf("%q, want the protocol's bytes and nothing of HTTP's", got)
	}
	c.Close()
	if err := receive(t, "Closed", p.Done); !errors.Is(err, serve.ErrClosed) {
		t.Fatalf("Closed after the client left: %v", err)
	}
}

// TestHandOverHandlerGoesOn: the handler may go on after the hand-over, parked until the
// protocol wakes it, and write through the Conn; its return ends the request, not the
// connection.
func TestHandOverHandlerGoesOn(t *testing.T) {
	woken := make(chan string, 1)
	var hc *serve.Conn
	var parked *serve.Ctx
	_, addr := startServer(t, func(c *serve.Ctx) {
		c.SetStatus(101)
		c.SetHeader("Upgrade", "x")
		var err error
		parked = c
		hc, err = c.HandOver(&wakeProtocol{woken: woken, handler: func() *serve.Ctx { return parked }})
		if err != nil {
			t.Errorf("HandOver: %v", err)
			return
		}
		if err := c.Suspend(0); err != nil {
			t.Errorf("Suspend: %v", err)
		}
		hc.Write([]byte("handler saw " + <-woken))
	}, serve.Options{})
	c := dial(t, addr)
	c.Send("GET / HTTP/1.1\r\nHost: h\r\nUpgrade: x\r\nConnection: Upgrade\r\n\r\n")
	if resp, err := http.ReadResponse(c.R, nil); err != nil || resp.StatusCode != 101 {
		t.Fatalf("%v %v", resp, err)
	}
	c.Send("ping")
	if got := readN(t, c.R, len("handler saw ping")); got != "handler saw ping" {
		t.Fatalf("%q", got)
	}
	c.Send("again") // the handler has returned: the protocol still has the connection
	if got := readN(t, c.R, len("again")); got != "again" {
		t.Fatalf("%q", got)
	}
}

// wakeProtocol hands its first bytes to the parked handler, and echoes the rest.
type wakeProtocol struct {
	woken   chan string
	handler func() *serve.Ctx
	first   bool
}

func (p *wakeProtocol) Receive(c *serve.Conn, in []byte) int {
	if !p.first {
		p.first = true
		p.woken <- string(in)
		p.handler().Resume(nil)
		return len(in)
	}
	c.Write(in)
	return len(in)
}
func (p *wakeProtocol) Drained(*serve.Conn)       {}
func (p *wakeProtocol) Timeout(*serve.Conn)       {}
func (p *wakeProtocol) Shutdown(c *serve.Conn)    { c.Close() }
func (p *wakeProtocol) Closed(*serve.Conn, error) {}

// TestHandOverDeadlineDrainShutdown: the protocol's deadline, its output drained after a slow
// client, and the server's shutdown are each told to it.
func TestHandOverDeadlineDrainShutdown(t *testing.T) {
	p := servetest.NewEcho("")
	conns := make(chan *serve.Conn, 1)
	s, addr := startServer(t, func(c *serve.Ctx) {
		hc, err := c.HandOver(p)
		if err != nil {
			t.Errorf("HandOver: %v", err)
		}
		hc.SetTimeout(time.Millisecond)
		conns <- hc
	}, serve.Options{WriteHighWater: 64 << 10})
	c := dial(t, addr)
	c.SetReadBuffer(16 << 10)
	c.Send("GET / HTTP/1.1\r\nHost: h\r\n\r\n")
	receive(t, "the hand-over", conns)
	if got := readN(t, c.R, len("timeout")); got != "timeout" {
		t.Fatalf("%q", got)
	}
	c.Send("big")
	if got := readN(t, c.R, 1<<20); got != strings.Repeat("\x00", 1<<20) {
		t.Fatal("the megabyte came back changed")
	}
	if got := readN(t, c.R, len("drained")); got != "drained" {
		t.Fatalf("%q", got)
	}
	go s.Shutdown(t.Context())
	if got := readN(t, c.R, len("going away")); got != "going away" {
		t.Fatalf("%q", got)
	}
	c.ExpectEOF()
	if err := receive(t, "Closed", p.Done); err != nil {
		t.Fatalf("Closed after the protocol's own Close: %v", err)
	}
	calls := fmt.Sprint(p.Calls())
	if !strings.Contains(calls, "timeout") || !strings.Contains(calls, "drained") || !strings.Contains(calls, "shutdown") {
		t.Fatalf("calls %s", calls)
	}
}

// TestHandOverRefused: a request whose body is unread, or whose response has started, cannot
// be handed over; the connection stays HTTP's.
func TestHandOverRefused(t *testing.T) {
	_, addr := startServer(t, func(c *serve.Ctx) {
		if c.Path() == "/started" {
			c.SetStatus(200)
		}
		_, err := c.HandOver(servetest.NewEcho(""))
		c.WriteString(fmt.Sprint(err != nil))
	}, serve.Options{})
	c := dial(t, addr)
	c.Send("POST /body HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n\r\nabc")
	if _, body := c.Response("POST"); body != "true" {
		t.Fatalf("a request with an unread body was handed over: %q", body)
	}
	c.Send("GET /started HTTP/1.1\r\nHost: h\r\n\r\n")
	if _, body := c.Response("GET"); body != "true" {
		t.Fatalf("a started response was handed over: %q", body)
	}
}

// TestHandOverAfterParking: a handler that parks before it switches protocols (an upgrade that
// first checks something elsewhere) hands over the bytes the client sent behind the head, though
// they cannot start a request: the next protocol's, kept as the request said it may switch
// (Connection: upgrade, or CONNECT); behind a request that may not, they would be dropped.
func TestHandOverAfterParking(t *testing.T) {
	for _, head := range []string{
		"GET / HTTP/1.1\r\nHost: h\r\nUpgrade: echo\r\nConnection: Upgrade\r\n\r\n",
		"CONNECT h:443 HTTP/1.1\r\nHost: h:443\r\n\r\n",
	} {
		p := servetest.NewEcho("")
		parked := make(chan serve.Waker, 1)
		_, addr := startServer(t, func(c *serve.Ctx) {
			parked <- c.Waker()
			c.Suspend(0)
			if c.Method() != "CONNECT" {
				c.SetStatus(101)
				c.SetHeader("Upgrade", "echo")
			}
			if _, err := c.HandOver(p); err != nil {
				t.Errorf("HandOver: %v", err)
			}
		}, serve.Options{AllowCONNECT: true})
		c := dial(t, addr)
		early := "\x81\x82\x00\x00\x00\x00hi, not a request"
		c.Send(head + early)
		receive(t, "the handler to park", parked).Wake(nil)
		if !strings.HasPrefix(head, "CONNECT") {
			if resp, err := http.ReadResponse(c.R, nil); err != nil || resp.StatusCode != 101 {
				t.Fatalf("%v %v", resp, err)
			}
		}
		if got := readN(t, c.R, len(early)); got != early {
			t.Fatalf("%.60q: %q, want the bytes behind the head", head, got)
		}
	}
}
