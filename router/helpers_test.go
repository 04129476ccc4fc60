package router

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/dwellhttp/dwell/core"
)

// serve runs r on a loopback port for the duration of the test and returns its address.
func serve(t testing.TB, r *Router) string {
	t.Helper()
	s := core.NewServer(r.Handler(), core.Options{
		Addr:   "127.0.0.1:0",
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err := s.Listen(); err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() { errc <- s.ListenAndServe() }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		s.Shutdown(ctx)
		if err := <-errc; err != core.ErrServerClosed {
			t.Errorf("ListenAndServe returned %v", err)
		}
	})
	return s.Addr().String()
}

// A client sends raw requests over one kept-alive connection, so that tests can send targets
// (such as "*" or "//x/") that net/http's client would rewrite, and see redirects unfollowed.
type client struct {
	t  testing.TB
	c  net.Conn
	br *bufio.Reader
}

func dial(t testing.TB, addr string) *client {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(10 * time.Second))
	return &client{t, c, bufio.NewReader(c)}
}

// do sends method and target with the extra header lines given ("Name: value") and returns
// the response with its body read.
func (cl *client) do(method, target string, header ...string) (*http.Response, string) {
	cl.t.Helper()
	req := method + " " + target + " HTTP/1.1\r\nHost: test\r\n"
	for _, h := range header {
		req += h + "\r\n"
	}
	if _, err := io.WriteString(cl.c, req+"\r\n"); err != nil {
		cl.t.Fatal(err)
	}
	resp, err := http.ReadResponse(cl.br, &http.Request{Method: method})
	if err != nil {
		cl.t.Fatalf("%s %s: %v", method, target, err)
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		cl.t.Fatalf("%s %s: reading the body: %v", method, target, err)
	}
	return resp, string(b)
}

// reply returns a handler that writes its name and the route's parameters, as
// "name k=v k=v".
func reply(name string) core.Handler {
	return func(c *core.Ctx) {
		var b strings.Builder
		b.WriteString(name)
		for _, p := range c.Params() {
			b.WriteString(" " + p.Key + "=" + p.Value)
		}
		c.WriteString(b.String())
	}
}

// catchPanic returns the message of the panic f raises, or "" when it returns normally.
func catchPanic(f func()) (msg string) {
	defer func() {
		if v := recover(); v != nil {
			msg = panicText(v)
		}
	}()
	f()
	return ""
}
