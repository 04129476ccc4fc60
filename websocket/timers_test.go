package websocket

import (
	"errors"
	"testing"
	"time"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/core/coretest"
	"github.com/dwellhttp/dwell/websocket/internal/frame"
)

// closedWith serves connections of the event style with o and reports how each ended.
func closedWith(t *testing.T, o *Options) (string, <-chan error) {
	errs := make(chan error, 1)
	ev := &Events{
		Message: echoEvents.Message,
		Close:   func(_ *Conn, err error) { errs <- err },
	}
	return serve(t, func(cx *core.Ctx) { Serve(cx, o, ev) }), errs
}

func TestPings(t *testing.T) {
	addr, errs := closedWith(t, &Options{PingInterval: 20 * time.Millisecond, PongTimeout: time.Hour})
	c, _ := dial(t, addr)
	for range 3 {
		c.expect(frame.Ping, "")
		c.send(frame.Pong, "")
	}
	c.send(frame.Text, "still here")
	c.expect(frame.Text, "still here")
	c.send(frame.Close, closePayload(1000, ""))
	c.expectClose(1000)
	var ce *CloseError
	if err := coretest.Receive(t, "the close", errs); !errors.As(err, &ce) || ce.Code != 1000 || !ce.Remote {
		t.Fatalf("Close got %v, want the client's 1000", err)
	}
}

func TestPongTimeout(t *testing.T) {
	addr, errs := closedWith(t, &Options{PingInterval: 10 * time.Millisecond, PongTimeout: 10 * time.Millisecond})
	c, _ := dial(t, addr)
	c.expect(frame.Ping, "")
	c.ExpectEOF() // no pong: the connection is dropped
	c.TCPConn.Close()
	if err := coretest.Receive(t, "the close", errs); err != ErrPongTimeout {
		t.Fatalf("Close got %v, want ErrPongTimeout", err)
	}
}

func TestIdleTimeout(t *testing.T) {
	addr, errs := closedWith(t, &Options{IdleTimeout: 30 * time.Millisecond, PingInterval: -1})
	c, _ := dial(t, addr)
	c.send(frame.Text, "one")
	c.expect(frame.Text, "one")
	c.answerClose(CloseGoingAway)
	var ce *CloseError
	if err := coretest.Receive(t, "the close", errs); !errors.As(err, &ce) || ce.Code != CloseGoingAway || ce.Remote {
		t.Fatalf("Close got %v, want this side's 1001", err)
	}
}

// TestCloseTimeout: a close this side begins waits for the client's answer only so long.
func TestCloseTimeout(t *testing.T) {
	o := &Options{CloseTimeout: 20 * time.Millisecond}
	addr := serve(t, func(cx *core.Ctx) {
		if c, err := Accept(cx, o); err == nil {
			c.Close(4000, "go")
		}
	})
	c, _ := dial(t, addr)
	c.readClose(4000)
	c.ExpectEOF() // never answered
}

func TestShutdownCloses(t *testing.T) {
	srv, addr := coretest.Serve(t, echoServe(nil), core.Options{})
	c, _ := dial(t, addr)
	c.send(frame.Text, "x")
	c.expect(frame.Text, "x")
	done := make(chan error, 1)
	go func() { done <- srv.Shutdown(t.Context()) }()
	c.answerClose(CloseGoingAway)
	if err := coretest.Receive(t, "the shutdown", done); err != nil {
		t.Fatal(err)
	}
}
