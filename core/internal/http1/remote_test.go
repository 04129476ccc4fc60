package http1

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/dwellhttp/dwell/core/internal/serve"
	"github.com/dwellhttp/dwell/core/internal/servetest"
)

// TestRemote: a goroutine reaches a handed-over connection through its Remote: Do runs on the
// loop, in order; WaitDrained waits while the output is past the high-water mark, until the
// client has taken it; after the close, both say ErrClosed. Code of the loop, which cannot wait,
// is refused both.
func TestRemote(t *testing.T) {
	remotes := make(chan *serve.Remote, 1)
	onLoop := make(chan string, 2)
	p := servetest.NewEcho("")
	_, addr := startServer(t, func(c *serve.Ctx) {
		c.SetStatus(101)
		c.SetHeader("Upgrade", "echo")
		c.SetHeader("Connection", "Upgrade")
		hc, err := c.HandOver(p)
		if err != nil {
			t.Error(err)
			return
		}
		r := hc.Remote()
		for _, call := range []func(){func() { r.Do(func(*serve.Conn) {}) }, func() { r.WaitDrained() }} {
			func() {
				defer func() { onLoop <- fmt.Sprint(recover()) }()
				call()
			}()
		}
		remotes <- r
	}, serve.Options{WriteHighWater: 64 << 10})
	cl := dial(t, addr)
	cl.Send("GET / HTTP/1.1\r\nHost: h\r\nUpgrade: echo\r\nConnection: Upgrade\r\n\r\n")
	if _, err := readResp(cl); err != nil { // the 101's (empty) body: the rest is the protocol's
		t.Fatal(err)
	}
	r := receive(t, "the Remote", remotes)
	for _, op := range []string{"Remote.Do", "Remote.WaitDrained"} {
		if msg := <-onLoop; !strings.Contains(msg, op+" called on a loop") {
			t.Errorf("%s from the handler: panicked with %q", op, msg)
		}
	}
	big := bytes.Repeat([]byte("x"), 1<<20)
	var ranOnLoop bool
	if err := r.Do(func(hc *serve.Conn) { ranOnLoop = hc.Loop().OnLoop(); hc.Write(big) }); err != nil || !ranOnLoop {
		t.Fatalf("Do: %v, on the loop %v", err, ranOnLoop)
	}
	waited := make(chan error, 1)
	go func() { waited <- r.WaitDrained() }()
	// The output is past the mark until the client reads it; then WaitDrained returns.
	if _, err := io.ReadFull(cl.R, make([]byte, len(big))); err != nil {
		t.Fatal(err)
	}
	if err := receive(t, "WaitDrained", waited); err != nil {
		t.Fatalf("WaitDrained: %v", err)
	}
	if err := r.Do(func(hc *serve.Conn) { hc.Close() }); err != nil {
		t.Fatal(err)
	}
	cl.Close() // the loop lingers for the client's end otherwise
	receive(t, "the close", p.Done)
	if err := r.Do(func(*serve.Conn) { t.Error("Do ran after the close") }); err != serve.ErrClosed {
		t.Errorf("Do after the close: %v, want ErrClosed", err)
	}
	if err := r.WaitDrained(); err != serve.ErrClosed {
		t.Errorf("WaitDrained after the close: %v, want ErrClosed", err)
	}
}
