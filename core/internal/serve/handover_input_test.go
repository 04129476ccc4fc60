package serve

import (
	"bytes"
	"errors"
	"testing"

	"github.com/dwellhttp/dwell/core/internal/h2"
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

func (p *lineProtocol) Receive(c *Conn, in []byte) int {
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
	_, addr := startServer(t, func(c *Ctx) { c.HandOver(p) }, Options{})
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
	_, addr := startServer(t, func(c *Ctx) { c.HandOver(p) }, Options{})
	c := dial(t, addr)
	c.Send("GET / HTTP/1.1\r\nHost: h\r\n\r\n")
	go c.Write(make([]byte, 1<<20)) // it fails once the server has closed
	if err := receive(t, "Closed", p.closed); !errors.Is(err, ErrInputFull) {
		t.Fatalf("Closed(%v), want ErrInputFull", err)
	}
}

// TestH2TunnelGivesAgainWhatItDidNotTake: on a stream handed over, what the protocol leaves of
// the DATA that came comes again in front of the next DATA, and the stream's window counts it
// read only once taken.
func TestH2TunnelGivesAgainWhatItDidNotTake(t *testing.T) {
	p := newLines(false)
	_, addr := startServer(t, tunnelHandler(p, 0, nil), Options{})
	c := dialH2(t, addr)
	c.connect(1)
	c.until("the answer to the CONNECT", func() bool { s := c.streams[1]; return s != nil && s.status != 0 })
	r := c.streams[1]
	c.data(1, false, []byte("ab"))
	c.data(1, false, []byte("c\nd"))
	c.until("abc;", func() bool { return string(r.body) == "abc;" })
	c.data(1, false, []byte("\n"))
	c.until("d;", func() bool { return string(r.body) == "abc;d;" })
	if r.end || r.rst {
		t.Fatalf("the stream ended: end %v, reset %v", r.end, r.rst)
	}
}

// TestH2TunnelInputFull: a protocol that takes none of a stream's whole window can make no
// progress — the client may send no more — and the stream closes with ErrInputFull while the
// connection goes on.
func TestH2TunnelInputFull(t *testing.T) {
	p := newLines(true)
	_, addr := startServer(t, tunnelHandler(p, 0, nil), Options{})
	c := dialH2(t, addr)
	c.connect(1)
	c.until("the answer to the CONNECT", func() bool { s := c.streams[1]; return s != nil && s.status != 0 })
	for left := h2.DefaultWindow; left > 0; left -= h2.MinMaxFrameSize {
		c.data(1, false, make([]byte, min(left, h2.MinMaxFrameSize)))
	}
	if err := receive(t, "Closed", p.closed); !errors.Is(err, ErrInputFull) {
		t.Fatalf("Closed(%v), want ErrInputFull", err)
	}
	c.get(3, "/hello")
	if r := c.response(3); string(r.body) != "hello" {
		t.Fatalf("the connection after: %q", r.body)
	}
}
