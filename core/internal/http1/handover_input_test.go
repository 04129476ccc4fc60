package http1

import (
	"bytes"
	"errors"
	"testing"

	"github.com/dwellhttp/dwell/core/internal/serve"
)

// A lineProtocol takes whole lines only, echoing each as "<line>;", and leaves a partial line
// to be given again with what arrives next. With none set, it takes nothing at all.
type lineProtocol struct {
	echoProtocol
	none bool
}

func newLines(none bool) *lineProtocol {
	return &lineProtocol{echoProtocol: echoProtocol{closed: make(chan error, 1)}, none: none}
}

func (p *lineProtocol) Receive(c *serve.Conn, in []byte) int {
	if p.none {
		return 0
	}
	end := bytes.LastIndexByte(in, '\n') + 1
	for _, line := range bytes.Split(in[:end], []byte("\n")) {
		if len(line) > 0 {
			c.Write(append(line, ';'))
		}
	}
	return end
}

// TestHandOverGivesAgainWhatItDidNotTake: what a protocol leaves of its input comes again, in
// front of what arrives next.
func TestHandOverGivesAgainWhatItDidNotTake(t *testing.T) {
	p := newLines(false)
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
	p := newLines(true)
	_, addr := startServer(t, func(c *serve.Ctx) { c.HandOver(p) }, serve.Options{})
	c := dial(t, addr)
	c.Send("GET / HTTP/1.1\r\nHost: h\r\n\r\n")
	go c.Write(make([]byte, 1<<20)) // it fails once the server has closed
	if err := receive(t, "Closed", p.closed); !errors.Is(err, serve.ErrInputFull) {
		t.Fatalf("Closed(%v), want ErrInputFull", err)
	}
}
