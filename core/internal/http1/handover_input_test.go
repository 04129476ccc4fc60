package http1

import (
	"errors"
	"testing"

	"github.com/dwellhttp/dwell/core/internal/serve"
	"github.com/dwellhttp/dwell/core/internal/servetest"
)

// TestHandOverGivesAgainWhatItDidNotTake: what a protocol leaves of its input comes again, in
// front of what arrives next.
func TestHandOverGivesAgainWhatItDidNotTake(t *testing.T) {
	p := servetest.NewLines(false)
	_, addr := startServer(t, func(c *serve.Ctx) { c.HandOver(p) }, serve.Options{})
	c := dial(t, addr)
	c.Send("GET / HTTP/1.1\r\nHost: h\r\n\r\nab")
	c.Send("c\nd")
	if got := readN(t, c.R, 4); got != "abc;" {
		t.Fatalf("%q, want abc;", got)
	}
	c.Send("\n")
	if got := readN(t, c.R, 2); got != "d;" {
		t.Fatalf("%q, want d;", got)
	}
}

// TestHandOverInputFull: a protocol that takes none of a full read buffer can make no progress,
// and its connection closes with ErrInputFull.
func TestHandOverInputFull(t *testing.T) {
	p := servetest.NewLines(true)
	_, addr := startServer(t, func(c *serve.Ctx) { c.HandOver(p) }, serve.Options{})
	c := dial(t, addr)
	c.Send("GET / HTTP/1.1\r\nHost: h\r\n\r\n")
	go c.Write(make([]byte, 1<<20)) // it fails once the server has closed
	if err := receive(t, "Closed", p.Done); !errors.Is(err, serve.ErrInputFull) {
		t.Fatalf("Closed(%v), want ErrInputFull", err)
	}
}
