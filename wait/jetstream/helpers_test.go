package jetstream

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/core/coretest"
	"github.com/nats-io/nats.go"
	natsjs "github.com/nats-io/nats.go/jetstream"
)

// The tests run a real NATS server with JetStream in the test process, storing to a temporary
// directory, and talk to it over loopback TCP as production does.

const (
	testStream  = "chat"
	testSubject = "chat.messages"
)

// createStream creates the test stream, with a second subject that is not the topic's.
func createStream(t testing.TB, nc *nats.Conn) {
	t.Helper()
	js, err := natsjs.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), coretest.Patience)
	defer cancel()
	if _, err := js.CreateStream(ctx, natsjs.StreamConfig{
		Name:     testStream,
		Subjects: []string{testSubject, "chat.other"},
	}); err != nil {
		t.Fatal(err)
	}
}

// decodeString is the tests' Decode: a message is its text; "bad" is refused.
func decodeString(_ uint64, data []byte) (string, error) {
	if string(data) == "bad" {
		return "", fmt.Errorf("refused %q", data)
	}
	return string(data), nil
}

// newTopic follows the test subject over nc until the test ends.
func newTopic(t testing.TB, nc *nats.Conn, history int) *Topic[string] {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), coretest.Patience)
	defer cancel()
	tp, err := New(ctx, nc, Config[string]{
		Stream:  testStream,
		Subject: testSubject,
		Decode:  decodeString,
		History: history,
		Timeout: 2 * time.Second,
		Logger:  slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tp.Close)
	return tp
}

// publish publishes texts and returns the last one's sequence number.
func publish(t testing.TB, tp *Topic[string], texts ...string) uint64 {
	t.Helper()
	var seq uint64
	for _, s := range texts {
		var err error
		if seq, err = tp.Publish(context.Background(), []byte(s)); err != nil {
			t.Fatalf("Publish(%q): %v", s, err)
		}
		// Publish returns once this process has received the message: Last says so too.
		if last := tp.Last(); last < seq {
			t.Fatalf("Publish(%q) returned %d, but Last is %d", s, seq, last)
		}
	}
	return seq
}

// waitFor polls cond until it holds; only a hang (coretest.Patience) fails the test.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	coretest.WaitFor(t, what, cond)
}

// poller serves a topic's long poll for the tests: GET /?after=N&ms=T answers
// "last:m1,m2,...;err" from Next, or from OnNext for the path /k; entered counts the requests
// that reached the handler.
type poller struct {
	tp      *Topic[string]
	entered atomic.Int32
	addr    string
	srv     *core.Server
}

func servePolls(t testing.TB, tp *Topic[string], loops int) *poller {
	t.Helper()
	p := &poller{tp: tp}
	p.srv, p.addr = coretest.Serve(t, p.handle, core.Options{Loops: loops})
	return p
}

func (p *poller) handle(c *core.Ctx) {
	after, _ := strconv.ParseUint(c.Query("after"), 10, 64)
	ms, _ := strconv.Atoi(c.Query("ms"))
	p.entered.Add(1)
	if c.Path() == "/k" {
		p.tp.OnNext(c, after, time.Duration(ms)*time.Millisecond, reply)
		return
	}
	msgs, last, err := p.tp.Next(c, after, time.Duration(ms)*time.Millisecond)
	reply(c, msgs, last, err)
}

func reply(c *core.Ctx, msgs []string, last uint64, err error) {
	e := "nil"
	if err != nil {
		e = err.Error()
	}
	fmt.Fprintf(c, "%d:%s;%s", last, strings.Join(msgs, ","), e)
}

// get sends GET target on a fresh connection and returns the body.
func (p *poller) get(t testing.TB, target string) string {
	t.Helper()
	c := coretest.Dial(t, p.addr)
	defer c.Close()
	c.Send("GET " + target + " HTTP/1.1\r\nHost: h\r\n\r\n")
	_, body := c.Response("GET")
	return body
}

// start sends GET target on a fresh connection and returns a channel for its body.
func (p *poller) start(t testing.TB, target string) <-chan string {
	t.Helper()
	c := coretest.Dial(t, p.addr)
	c.Send("GET " + target + " HTTP/1.1\r\nHost: h\r\n\r\n")
	out := make(chan string, 1)
	go func() {
		defer c.Close()
		resp, err := httpReadResponse(c)
		if err != nil {
			out <- "error: " + err.Error()
			return
		}
		out <- resp
	}()
	return out
}

// A proxy stands between a client and the NATS server, so that a test can cut one client off
// while the others stay connected.
type proxy struct {
	ln       net.Listener
	upstream string
	mu       sync.Mutex
	conns    []net.Conn
	refusing bool
}

func startProxy(t testing.TB, upstream string) *proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{ln: ln, upstream: upstream}
	go p.serve()
	t.Cleanup(func() { ln.Close(); p.cut() })
	return p
}

func (p *proxy) url() string { return "nats://" + p.ln.Addr().String() }

func (p *proxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		refusing := p.refusing
		p.mu.Unlock()
		if refusing {
			c.Close()
			continue
		}
		u, err := net.Dial("tcp", p.upstream)
		if err != nil {
			c.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, c, u)
		p.mu.Unlock()
		go func() { io.Copy(u, c); u.Close() }()
		go func() { io.Copy(c, u); c.Close() }()
	}
}

// cut closes every connection through the proxy and refuses new ones until restore.
func (p *proxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.refusing = true
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

func (p *proxy) restore() {
	p.mu.Lock()
	p.refusing = false
	p.mu.Unlock()
}

// httpReadResponse reads one response from c and returns its body; unlike c.Response it may be
// called from any goroutine.
func httpReadResponse(c *coretest.Conn) (string, error) {
	resp, err := http.ReadResponse(c.R, nil)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

// receive waits up to 20 s for a body from a poll started with start.
func receive(t testing.TB, ch <-chan string) string {
	t.Helper()
	select {
	case s := <-ch:
		return s
	case <-time.After(coretest.Patience):
		t.Fatal("no answer within 20 s")
		return ""
	}
}
